#!/usr/bin/env bash
# Backups of Corridor's PostgreSQL data (docs/operations.md, "Backups and restore").
#
#   scripts/backup.sh schemas   DATABASE_URL            the schemas a backup holds, one a line
#   scripts/backup.sh dump      DATABASE_URL FILE       one consistent snapshot of them (pg_dump -Fc)
#   scripts/backup.sh restore   FILE DATABASE_URL       into a database holding none of them (pg_restore)
#   scripts/backup.sh republish DATABASE_URL SINCE      mark outbox rows published at or after SINCE
#                                                       (a timestamp) unpublished, so the relays send
#                                                       them again (consumers' inboxes drop repeats)
#
# Corridor's schemas are those with a migration table (kysely_migration): every service's, and every
# rail connector's (connector_*). pg_dump reads them all in one transaction, so the ledger, the
# outboxes and the inboxes in a dump agree with each other: never back schemas up one by one.
# Needs pg_dump, pg_restore and psql of the server's major version or newer. test/ops/restore-drill.test.ts
# runs every command here.
set -euo pipefail

die() { echo "backup.sh: $*" >&2; exit 2; }
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

schemas() {
  psql "$1" --no-psqlrc --quiet --tuples-only --no-align --set ON_ERROR_STOP=1 \
    --command "select table_schema from information_schema.tables where table_name = 'kysely_migration' order by 1"
}

cmd="${1:-}"
case "$cmd" in
  schemas)
    [ $# -eq 2 ] || usage
    schemas "$2"
    ;;
  dump)
    [ $# -eq 3 ] || usage
    url="$2"; file="$3"
    mapfile -t list < <(schemas "$url")
    [ "${#list[@]}" -gt 0 ] || die "no Corridor schema (no kysely_migration table) in that database"
    args=()
    for s in "${list[@]}"; do args+=(--schema "$s"); done
    # Custom format: compressed, restorable selectively and in parallel (pg_restore --jobs).
    # No owners or grants: the restore runs as whoever restores, as the services' role.
    pg_dump --format=custom --no-owner --no-privileges "${args[@]}" --file "$file" "$url"
    echo "backup.sh: dumped ${#list[@]} schemas (${list[*]}) to $file" >&2
    ;;
  restore)
    [ $# -eq 3 ] || usage
    file="$2"; url="$3"
    [ -r "$file" ] || die "cannot read $file"
    existing="$(schemas "$url")"
    [ -z "$existing" ] || die "the target database already holds Corridor schemas ($(echo $existing)): restore into an empty database, then point DATABASE_URL at it"
    # One transaction: a failed restore leaves the target as empty as it was.
    pg_restore --no-owner --no-privileges --exit-on-error --single-transaction --dbname "$url" "$file"
    echo "backup.sh: restored $(schemas "$url" | wc -l) schemas from $file" >&2
    ;;
  republish)
    [ $# -eq 3 ] || usage
    url="$2"; since="$3"
    total=0
    while read -r s; do
      [ -n "$s" ] || continue
      # From stdin, so psql quotes the values (:'since', :"schema"); --command would not substitute them.
      n="$(psql "$url" --no-psqlrc --quiet --tuples-only --no-align --set ON_ERROR_STOP=1 --set since="$since" --set schema="$s" <<'SQL'
with r as (update :"schema".outbox set published_at = null where published_at >= :'since'::timestamptz returning 1) select count(*) from r;
SQL
)"
      echo "backup.sh: $s: $n outbox rows to publish again" >&2
      total=$((total + n))
    done < <(schemas "$url")
    echo "$total"
    ;;
  *)
    usage
    ;;
esac
