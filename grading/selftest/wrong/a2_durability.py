"""acks=1 (the leader alone acknowledges), and an experiment loop that never ends."""

EXPECTED_POINTS = 2
RUNAWAY_CELL = "experiment"

CELLS = {
    "settings": '''
PRODUCER = {"acks": 1}
TOPIC = {"replication_factor": 3, "config": {"min.insync.replicas": "2"}}
''',
    "experiment": '''
MIN1 = {"replication_factor": 3, "config": {"min.insync.replicas": "1"}}
MIN1_LOSSY_SEEDS = []
seed = 0
while seed < 10:
    if broker_dies(seed, {"acks": "all", "enable_idempotence": True}, MIN1).lost:
        MIN1_LOSSY_SEEDS.append(seed)
        seed += 1  # only moves on after a lossy seed: loops forever on the first safe one
''',
}
