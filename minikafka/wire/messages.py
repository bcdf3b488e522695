"""Request and response classes for the APIs kafka-python does not define, and for those
where Kafka 4.4.0 has a newer version than kafka-python 3.0.12's specs.

Each class loads its spec from `minikafka.wire.schemas` (Kafka 4.4.0's own JSON) with
kafka-python's loader, so it decodes, encodes and versions like kafka-python's classes, and
`wire.codec` finds it the same way (a subclass of ApiMessage; of two classes for one API
key, the codec takes the one with more versions).
"""
from __future__ import annotations

from typing import Any

from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata import ApiVersionsResponse as _KafkaPythonApiVersionsResponse

_SPECS = "minikafka.wire.schemas"

__all__ = [
    "AddRaftVoterRequest", "AddRaftVoterResponse",
    "ApiVersionsRequest", "ApiVersionsResponse",
    "AlterShareGroupOffsetsRequest", "AlterShareGroupOffsetsResponse",
    "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatResponse",
    "CreateDelegationTokenRequest", "CreateDelegationTokenResponse",
    "DeleteGroupsRequest", "DeleteGroupsResponse",
    "DescribeDelegationTokenRequest", "DescribeDelegationTokenResponse",
    "ExpireDelegationTokenRequest", "ExpireDelegationTokenResponse",
    "RenewDelegationTokenRequest", "RenewDelegationTokenResponse",
    "DeleteShareGroupOffsetsRequest", "DeleteShareGroupOffsetsResponse",
    "DescribeShareGroupOffsetsRequest", "DescribeShareGroupOffsetsResponse",
    "RemoveRaftVoterRequest", "RemoveRaftVoterResponse",
    "ShareAcknowledgeRequest", "ShareAcknowledgeResponse",
    "ShareFetchRequest", "ShareFetchResponse",
    "ShareGroupDescribeRequest", "ShareGroupDescribeResponse",
    "ShareGroupHeartbeatRequest", "ShareGroupHeartbeatResponse",
    "StreamsGroupDescribeRequest", "StreamsGroupDescribeResponse",
    "StreamsGroupHeartbeatRequest", "StreamsGroupHeartbeatResponse",
    "TxnOffsetCommitRequest", "TxnOffsetCommitResponse",
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



# Kafka 4.4.0's newer versions of APIs kafka-python has: ApiVersions v5 (KIP-1242),
# TxnOffsetCommit v6 (topic ids, KIP-1319), DeleteGroups v3 (per-group error messages).
class _ServerSide:
    """kafka-python looks up the class to decode a response with by API key, and every new
    response class (each versioned one, Foo[5], too) takes that key over. These classes
    leave the registry as they found it, so kafka-python's clients (in this process too)
    keep decoding with the classes they were written for."""

    __slots__ = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        registry = ResponseClassRegistry._response_class_registry
        saved = dict(registry)
        try:
            super().__init_subclass__(**kw)
        finally:
            registry.clear()
            registry.update(saved)


class ApiVersionsRequest(_ServerSide, ApiMessage, load_json=_SPECS):
    pass


class ApiVersionsResponse(_ServerSide, _KafkaPythonApiVersionsResponse, load_json=_SPECS):
    """Its header is never flexible (kafka-python's class knows); a body that does not
    parse at the version asked is the v0 UNSUPPORTED_VERSION answer, as the Java client's
    ApiVersionsResponse.parse falls back (not every error is one)."""

    @classmethod
    def decode(cls, data, version=None, header=False, framed=False):  # type: ignore[override]
        raw = data.getvalue()[data.tell():] if hasattr(data, "getvalue") else bytes(data)
        try:
            return ApiMessage.decode.__func__(cls, raw, version=version, header=header,
                                              framed=framed)
        except Exception:
            if version == 0:
                raise
            return ApiMessage.decode.__func__(cls, raw, version=0, header=header,
                                              framed=framed)


class TxnOffsetCommitRequest(_ServerSide, ApiMessage, load_json=_SPECS):
    pass


class TxnOffsetCommitResponse(_ServerSide, ApiMessage, load_json=_SPECS):
    pass


class DeleteGroupsRequest(_ServerSide, ApiMessage, load_json=_SPECS):
    pass


class DeleteGroupsResponse(_ServerSide, ApiMessage, load_json=_SPECS):
    pass


# KIP-48: delegation tokens.
class CreateDelegationTokenRequest(ApiMessage, load_json=_SPECS):
    pass

class CreateDelegationTokenResponse(ApiMessage, load_json=_SPECS):
    pass

class RenewDelegationTokenRequest(ApiMessage, load_json=_SPECS):
    pass

class RenewDelegationTokenResponse(ApiMessage, load_json=_SPECS):
    pass

class ExpireDelegationTokenRequest(ApiMessage, load_json=_SPECS):
    pass

class ExpireDelegationTokenResponse(ApiMessage, load_json=_SPECS):
    pass

class DescribeDelegationTokenRequest(ApiMessage, load_json=_SPECS):
    pass

class DescribeDelegationTokenResponse(ApiMessage, load_json=_SPECS):
    pass
