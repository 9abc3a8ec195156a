#!/bin/sh
# Starts one Corridor deployable: the first argument or CORRIDOR_DEPLOYABLE names it (gateway,
# auth-sessions, ledger, quotes-fx, agents, customers-kyc, notifications, sandbox), or is a path
# to a .ts entry relative to /app.
set -eu
deployable="${1:-${CORRIDOR_DEPLOYABLE:-}}"
case "$deployable" in
  "") echo "usage: corridor-entrypoint <deployable> (or set CORRIDOR_DEPLOYABLE)" >&2; exit 64 ;;
  *.ts) entry="$deployable" ;;
  gateway) entry="gateway/src/main.ts" ;;
  auth-sessions|ledger|quotes-fx|agents|customers-kyc|notifications|sandbox) entry="services/$deployable/src/main.ts" ;;
  *) echo "unknown deployable: $deployable" >&2; exit 64 ;;
esac
: "${OTEL_SERVICE_NAME:=$deployable}"
export OTEL_SERVICE_NAME
cd /app
# `pnpm exec tsx` without the pnpm and tsx parent processes: node itself is PID 1's exec target, so
# SIGTERM reaches the host's drain handler directly.
exec node --import tsx "$entry"
