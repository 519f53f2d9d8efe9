#!/usr/bin/env bash
# ensure-tmux.sh: tmux on PATH, for the test that drives the built kubectl-hami's terminal UI in a real
# terminal (internal/tui/tmux_test.go: send-keys, capture-pane).
exec bash "$(dirname "$0")/ensure-tool.sh" tmux tmux https://github.com/tmux/tmux/wiki/Installing
