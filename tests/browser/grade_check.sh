#!/usr/bin/env bash
# The page's grade bands and advice must be the CLI's (grade_check.mjs). Usage: grade_check.sh SRCDIR
set -euo pipefail
. "$(dirname "$0")/../lib/require.sh"
need_cmd node nodejs
exec node "$(dirname "$0")/grade_check.mjs" "$1"
