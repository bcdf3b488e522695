"""The sink remembers (partition, offset) without the topic, so with two topics a payment
whose partition and offset were seen in the other topic is dropped (only the hidden tests
feed two topics); the converter commits the consumer's
offsets after the transaction instead of inside it (a crash in between repeats a batch)."""

EXPECTED_POINTS = 4
RUNAWAY_CELL = None

CELLS = {
    "balance_sink": '''
class BalanceSink:
    def __init__(self):
        self.balances = {}
        self.seen = set()

    def apply(self, record):
        if (record.partition, record.offset) in self.seen:
            return
        self.seen.add((record.partition, record.offset))
        payment = json.loads(record.value)
        self.balances[payment["account"]] = self.balances.get(payment["account"], 0) + payment["cents"]
''',
    "converter": '''
OUTPUT = "payments-eur"


def make_clients(cluster):
    consumer = cluster.consumer(PAYMENTS, group_id="converter", enable_auto_commit=False,
                                auto_offset_reset="earliest")
    producer = cluster.producer(transactional_id="converter-1")
    producer.init_transactions()
    return consumer, producer


def convert(consumer, producer, stop):
    while not stop():
        batch = consumer.poll(timeout_ms=500)
        if not batch:
            continue
        producer.begin_transaction()
        for records in batch.values():
            for record in records:
                payment = json.loads(record.value)
                out = {"id": payment["id"], "account": payment["account"], "euros": payment["cents"] / 100}
                producer.send(OUTPUT, value=json.dumps(out).encode())
        producer.commit_transaction()
        consumer.commit()
''',
}
