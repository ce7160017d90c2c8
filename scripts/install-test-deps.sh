#!/usr/bin/env bash
# The programs the test suite starts, installed from Debian's packages when they are missing.
# `.ci/run` calls it, and so does the README's test line. Root installs what is missing; anyone
# else is told the one command to run (exit 1). Nothing is started: a package's own daemon is kept
# from starting while it installs (policy-rc.d).
#
#   program                          package          used by
#   redis-server                     redis-server     every suite (and redis-server --sentinel
#                                                     for the Sentinel tests: no redis-sentinel
#                                                     package needed)
#   jq                               jq               the docs' commands (test/docs/curl-blocks)
#   promtool                         prometheus       alert rules and /metrics checks
#   tinyproxy, microsocks            tinyproxy, microsocks   the proxy tests (HTTP CONNECT, SOCKS5)
#   rabbitmq-server, nats-server     rabbitmq-server, nats-server   the event broker tests
#   chromium                         chromium         the dashboard's browser tests (playwright-core
#                                                     drives Debian's chromium, never a download)
#   valgrind, callgrind_control      valgrind         the cost budget (npm run cost-budget, run by
#                                                     .ci/run) and the benches that count instructions
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have redis-server || need+=(redis-server)
have jq || need+=(jq)
have promtool || need+=(prometheus)
have tinyproxy || need+=(tinyproxy)
have microsocks || need+=(microsocks)
{ [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || have rabbitmq-server; } || need+=(rabbitmq-server)
have nats-server || need+=(nats-server)
[ -x /usr/bin/chromium ] || need+=(chromium)
{ have valgrind && have callgrind_control; } || need+=(valgrind)

if [ ${#need[@]} -eq 0 ]; then
  echo "test dependencies: all installed"
  exit 0
fi
command="apt-get update && apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" != 0 ]; then
  echo "test dependencies missing: ${need[*]}" >&2
  echo "install them as root (Debian):  sudo sh -c '$command'" >&2
  exit 1
fi
echo "installing test dependencies: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
added_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && added_policy=1
fi
trap 'if [ -n "$added_policy" ]; then rm -f "$policy"; fi' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "test dependencies: installed ${need[*]}"
