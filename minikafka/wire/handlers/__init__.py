"""One module per API key.

Each module defines API_KEY, MIN_VERSION, MAX_VERSION and
`handle(ctx: RequestContext, request) -> response | bytes | Deferred | None`;
`minikafka.wire.registry.default_registry()` finds and registers them all.
"""
