"""AlterUserScramCredentials (key 51), v0: add or remove a user's SCRAM credential
(kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]' --entity-type users
--entity-name alice). The client sends the salt and the salted password; the controller
keeps the stored and server keys in the metadata log. One result per user, with
Kafka's errors: ALTER on the cluster needed (CLUSTER_AUTHORIZATION_FAILED), an unknown
mechanism (UNSUPPORTED_SASL_MECHANISM), iterations outside 4096-16384 or an empty user
(UNACCEPTABLE_CREDENTIAL), a user twice (DUPLICATE_RESOURCE), deleting what is not
there (RESOURCE_NOT_FOUND)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)

from ...core import errors
from ...core.errors import DUPLICATE_RESOURCE, UNACCEPTABLE_CREDENTIAL
from ...core.scram import MAX_ITERATIONS, MECHANISMS, from_salted_password
from ..registry import RequestContext
from ._common import may_call, serving_broker
from ._scram import BY_CODE

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

API_KEY = 51
MIN_VERSION = 0
MAX_VERSION = 0

_Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult


def _check(cluster: ClusterPort, change, deletion: bool) -> tuple[int, str | None]:
    if not change.name:
        return UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    mechanism = BY_CODE.get(change.mechanism)
    if mechanism is None:
        return errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if deletion:
        if (change.name, mechanism) not in cluster.controller.scram_credentials:
            return errors.RESOURCE_NOT_FOUND, \
                "Attempt to delete a user credential that does not exist"
        return errors.NONE, None
    minimum = MECHANISMS[mechanism][2]
    if change.iterations < minimum:
        return UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if change.iterations > MAX_ITERATIONS:
        return UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return errors.NONE, None


def handle(ctx: RequestContext, request: AlterUserScramCredentialsRequest
           ) -> AlterUserScramCredentialsResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    changes = [(d, True) for d in request.deletions] + [(u, False) for u in request.upsertions]
    users = [c.name for c, _ in changes]
    order = list(dict.fromkeys(users))
    outcome: dict[str, tuple[int, str | None]] = {}
    if not may_call(ctx, "AlterUserScramCredentials"):
        outcome = dict.fromkeys(order, (errors.CLUSTER_AUTHORIZATION_FAILED, None))
    else:
        for user in order:
            if users.count(user) > 1:
                outcome[user] = (DUPLICATE_RESOURCE,
                                 "A user credential cannot be altered twice in the same request")
        for change, deletion in changes:
            if change.name not in outcome:
                outcome[change.name] = _check(cluster, change, deletion)
        for change, deletion in changes:
            if outcome[change.name][0] != errors.NONE:
                continue
            mechanism = BY_CODE[change.mechanism]
            if deletion:
                cluster.delete_scram_credential(change.name, mechanism)
            else:
                cluster.put_scram_credential(change.name, from_salted_password(
                    mechanism, bytes(change.salted_password), bytes(change.salt),
                    change.iterations))
    return AlterUserScramCredentialsResponse(
        version=ctx.api_version, throttle_time_ms=0,
        results=[_Result(user=u, error_code=outcome[u][0], error_message=outcome[u][1])
                 for u in order])
