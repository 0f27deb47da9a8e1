"""Generated gRPC code (make python-proto): the Scorer and Judge services of
proto/scorekit/plugin/v1/plugin.proto, and go-plugin's health, controller and broker
services from sdks/python/proto/. Never edited by hand."""
