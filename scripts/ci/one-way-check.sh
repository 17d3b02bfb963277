#!/usr/bin/env bash
# One way from the app to the server (ARCHITECTURE.md): FitBaseKit never spells a server path, and an answer becomes
# an error in one place (FitBaseClient's ProblemAnswers). Fails, naming the lines, when either slips back.
set -euo pipefail
cd "$(dirname "$0")/../.."
failed=0
if grep -rn '/v1/' Sources/FitBaseKit; then
  echo "one-way: FitBaseKit spells server paths above; call the generated operation (client.api.<operationId>) instead"
  failed=1
fi
# The mapping itself, and the sync engine's pages it reads by hand (they carry the same problem documents).
allowed='Sources/FitBaseClient/(FitBaseError|ProblemAnswers)\.swift|Sources/FitBaseClient/Sync/SyncEngine(\+Wire)?\.swift'
if grep -rnE 'from\(statusCode|applicationProblemJson' Sources/FitBaseClient Sources/FitBaseKit | grep -vE "^($allowed):"; then
  echo "one-way: an answer is mapped to an error above; ProblemAnswers already throws every refused answer as FitBaseError"
  failed=1
fi
[ "$failed" = 0 ] && echo "one-way: no server path in FitBaseKit; the answer-to-error mapping is in one place"
exit "$failed"
