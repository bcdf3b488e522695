"""Request and response classes for the APIs kafka-python does not define.

Each class loads its spec from `minikafka.wire.schemas` (Kafka 4.4.0's own JSON) with
kafka-python's loader, so it decodes, encodes and versions like kafka-python's classes, and
`wire.codec` finds it the same way (a subclass of ApiMessage).
"""
from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SPECS = "minikafka.wire.schemas"

__all__ = [
    "AddRaftVoterRequest", "AddRaftVoterResponse",
    "AlterShareGroupOffsetsRequest", "AlterShareGroupOffsetsResponse",
    "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatResponse",
    "DeleteShareGroupOffsetsRequest", "DeleteShareGroupOffsetsResponse",
    "DescribeShareGroupOffsetsRequest", "DescribeShareGroupOffsetsResponse",
    "RemoveRaftVoterRequest", "RemoveRaftVoterResponse",
    "ShareAcknowledgeRequest", "ShareAcknowledgeResponse",
    "ShareFetchRequest", "ShareFetchResponse",
    "ShareGroupDescribeRequest", "ShareGroupDescribeResponse",
    "ShareGroupHeartbeatRequest", "ShareGroupHeartbeatResponse",
    "StreamsGroupDescribeRequest", "StreamsGroupDescribeResponse",
    "StreamsGroupHeartbeatRequest", "StreamsGroupHeartbeatResponse",
]

# KIP-848: the consumer group protocol.
class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_SPECS):
    pass

class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_SPECS):
    pass

class ConsumerGroupDescribeRequest(ApiMessage, load_json=_SPECS):
    pass

class ConsumerGroupDescribeResponse(ApiMessage, load_json=_SPECS):
    pass


# KIP-932: share groups.
class ShareGroupHeartbeatRequest(ApiMessage, load_json=_SPECS):
    pass

class ShareGroupHeartbeatResponse(ApiMessage, load_json=_SPECS):
    pass

class ShareGroupDescribeRequest(ApiMessage, load_json=_SPECS):
    pass

class ShareGroupDescribeResponse(ApiMessage, load_json=_SPECS):
    pass

class ShareFetchRequest(ApiMessage, load_json=_SPECS):
    pass

class ShareFetchResponse(ApiMessage, load_json=_SPECS):
    pass

class ShareAcknowledgeRequest(ApiMessage, load_json=_SPECS):
    pass

class ShareAcknowledgeResponse(ApiMessage, load_json=_SPECS):
    pass

class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_SPECS):
    pass

class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_SPECS):
    pass

class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_SPECS):
    pass

class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_SPECS):
    pass

class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=_SPECS):
    pass

class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=_SPECS):
    pass


# KIP-1071: streams groups.
class StreamsGroupHeartbeatRequest(ApiMessage, load_json=_SPECS):
    pass

class StreamsGroupHeartbeatResponse(ApiMessage, load_json=_SPECS):
    pass

class StreamsGroupDescribeRequest(ApiMessage, load_json=_SPECS):
    pass

class StreamsGroupDescribeResponse(ApiMessage, load_json=_SPECS):
    pass


# KIP-853: dynamic KRaft quorums.
class AddRaftVoterRequest(ApiMessage, load_json=_SPECS):
    pass

class AddRaftVoterResponse(ApiMessage, load_json=_SPECS):
    pass

class RemoveRaftVoterRequest(ApiMessage, load_json=_SPECS):
    pass

class RemoveRaftVoterResponse(ApiMessage, load_json=_SPECS):
    pass

