#!/usr/bin/env bash
# A minimal fake of Claude Code's stream-json mode for load tests: a few MB per
# process instead of a Node runtime, so hundreds of sessions fit on one
# machine. Each stdin line is one turn: init, one text block, one result (the
# same line shapes as the recordings, fewer fields).
if [ "${1:-}" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi
session=unknown
while [ $# -gt 0 ]; do
  case "$1" in --session-id|--resume) session="$2"; shift ;; esac
  shift
done
turn=0
cost=0
while IFS= read -r line; do
  case "$line" in
    *'"subtype":"initialize"'*)
      # The runner's tool gate: answered as the real CLI does (hooks applied); this fake runs no tools.
      id=${line#*\"request_id\":\"}; id=${id%%\"*}
      printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"hooks_applied":true}}}\n' "$id"
      continue ;;
    *'"control_request"'*) continue ;;
  esac
  turn=$((turn + 1))
  cost=$((cost + 1))
  printf '{"type":"system","subtype":"init","session_id":"%s","model":"claude-tiny","claude_code_version":"2.1.330"}\n' "$session"
  printf '{"type":"assistant","message":{"id":"msg_tiny_%s","role":"assistant","content":[{"type":"text","text":"tiny answer %s"}]},"session_id":"%s"}\n' "$turn" "$turn" "$session"
  printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"duration_api_ms":1,"num_turns":1,"result":"tiny answer %s","session_id":"%s","total_cost_usd":0.00%s,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}\n' "$turn" "$session" "$cost"
done
