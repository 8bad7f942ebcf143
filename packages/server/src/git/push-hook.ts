/**
 * The pre-receive hook of every repository. receive-pack runs it before any ref moves, with the
 * environment the server gave `git http-backend` for this credential (http-backend.ts), and a
 * non-zero exit refuses the whole push. Fast-forward-only and no-deletes are git's own settings
 * (receive.denyNonFastForwards, receive.denyDeletes); this adds the rules that depend on who pushes:
 * - only branches;
 * - never a read-only branch (the deploy branch when `deployBranchReadOnly` is on);
 * - never a personal `dev-…` branch other than the credential's own.
 * Branch names cannot hold spaces or glob characters (check-ref-format), so word lists are safe.
 * A push that does not come through the server (no MAPI_PUSH) is refused outright.
 */
export const PRE_RECEIVE_HOOK = `#!/bin/sh
if [ "$MAPI_PUSH" != "1" ]; then
  echo "refused: pushes to this repository go through the server"
  exit 1
fi
status=0
while read old new ref; do
  case "$ref" in
    refs/heads/*) branch="\${ref#refs/heads/}" ;;
    *) echo "refused $ref: only branches can be pushed"; status=1; continue ;;
  esac
  for b in $MAPI_READ_ONLY_BRANCHES; do
    if [ "$b" = "$branch" ]; then echo "refused $branch: the deploy branch is read-only (deployBranchReadOnly)"; status=1; fi
  done
  case "$branch" in
    dev-*)
      own=0
      for b in $MAPI_OWN_DEV_BRANCHES; do
        if [ "$b" = "$branch" ]; then own=1; fi
      done
      if [ $own = 0 ]; then echo "refused $branch: a dev-mode branch takes pushes only from the credential that opened it"; status=1; fi
      ;;
  esac
done
exit $status
`;
