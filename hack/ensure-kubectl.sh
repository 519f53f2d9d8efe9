#!/usr/bin/env bash
# ensure-kubectl.sh: a kubectl on PATH, for the test that runs kubectl-hami as a kubectl plugin
# (internal/cli/integration_plugin_test.go) and the release test; plugins need any kubectl version.
exec bash "$(dirname "$0")/ensure-tool.sh" kubectl kubernetes-client https://kubernetes.io/docs/tasks/tools/
