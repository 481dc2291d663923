#!/bin/bash
# servemem.sh BINARY DATADIR_TEMPLATE LABEL
#
# Measures the whole resident memory of `BINARY serve` (memory store, semantic
# layer on with the built-in embedder: no EMBED_BASE_URL) on a copy of
# DATADIR_TEMPLATE:
#   phase catchup: start on a fresh copy, poll GET /healthz every $POLL s until
#                  the semantic layer has caught up (pending 0, vectors ==
#                  chunks > 0, nothing building, no error, clusters trained
#                  (index not "packed"), same counts on two
#                  polls in a row), idle $IDLE s, read VmRSS/VmHWM (VmRSS is
#                  also sampled during the idle window: idle_rss_min/max),
#                  then idle $EXTRA_IDLE s more and read VmRSS again (late_*).
#   phase stop:    SIGTERM, time until exit (the final snapshot, now holding
#                  the semantic section, is written).
#   phase restart: (RESTART=1, default) start again on the same dir, wait
#                  until /healthz answers and the semantic layer is caught
#                  up, idle $IDLE s (+$EXTRA_IDLE s), read VmRSS/VmHWM, SIGTERM.
# One summary line per phase goes to stdout and is appended to $RESULTS.
#
# Environment knobs (defaults):
#   POLL=10 IDLE=150 EXTRA_IDLE=150 (0: no late reading) RESTART=1 MAX_WAIT=10800 (s to catch up before giving up)
#   STOP_WAIT=1800 (s to wait for exit after SIGTERM) PORT=(free one in 18000..18999)
#   RESULTS=/tmp/servemem-results.txt  RUNROOT=/tmp/servemem/runs
#   KEEP=0 (1 keeps the copied data dir; else it is removed at the end)
# Per-run files (server log, healthz/RSS samples every poll) stay in
# $RUNROOT/LABEL-TIMESTAMP/ (data/ removed unless KEEP=1).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 BINARY DATADIR_TEMPLATE LABEL" >&2
	exit 2
fi
BIN=$(readlink -f "$1")
TEMPLATE=$(readlink -f "$2")
LABEL=$3
POLL=${POLL:-10}
IDLE=${IDLE:-150}
EXTRA_IDLE=${EXTRA_IDLE:-150}
RESTART=${RESTART:-1}
MAX_WAIT=${MAX_WAIT:-10800}
STOP_WAIT=${STOP_WAIT:-1800}
RESULTS=${RESULTS:-/tmp/servemem-results.txt}
RUNROOT=${RUNROOT:-/tmp/servemem/runs}
KEEP=${KEEP:-0}

[ -x "$BIN" ] || { echo "not an executable: $BIN" >&2; exit 2; }
[ -d "$TEMPLATE" ] || { echo "not a directory: $TEMPLATE" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

RUN=$RUNROOT/$LABEL-$(date +%Y%m%dT%H%M%S)
DATA=$RUN/data
mkdir -p "$RUN"
SAMPLES=$RUN/samples.tsv
echo -e "time\tphase\telapsed_s\tvmrss_kb\tvmhwm_kb\thealthz" > "$SAMPLES"

log() { echo "[$(date +%H:%M:%S)] $LABEL: $*" >&2; }

result() { # one summary line: stdout and $RESULTS
	local line
	line="$(date -u +%Y-%m-%dT%H:%M:%SZ) label=$LABEL $*"
	echo "$line"
	echo "$line" >> "$RESULTS"
}

if [ -z "${PORT:-}" ]; then
	for p in $(shuf -i 18000-18999); do
		if ! ss -ltnH "( sport = :$p )" | grep -q .; then PORT=$p; break; fi
	done
fi
ADDR=127.0.0.1:$PORT
URL=http://$ADDR

status_kb() { # status_kb PID FIELD -> kB value or empty
	awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null
}

healthz() { curl -s -m 30 "$URL/healthz"; }

snapfiles() { # name:bytes of the data dir's snapshot files, comma-separated
	find "$DATA" -maxdepth 1 -name 'snapshot-*' -printf '%f:%s\n' | sort | paste -sd, -
}

PID=
start_server() { # start_server LOGFILE
	# Only the semantic layer's default (built-in embedder): no EMBED_BASE_URL,
	# no LLM. No admin credentials: /healthz is open.
	env -u EMBED_BASE_URL -u LLM_BASE_URL -u STORE \
		DATA_DIR="$DATA" ADDR="$ADDR" BASE_URL="$URL" LOG_LEVEL=warn \
		PUBLIC_RATE_LIMIT=0 \
		nohup "$BIN" serve > "$1" 2>&1 < /dev/null &
	PID=$!
	log "started pid $PID on $ADDR, log $1"
}

stop_server() { # stop_server: SIGTERM, wait; sets STOP_S and STOP_RC
	local t0=$SECONDS
	kill -TERM "$PID" 2>/dev/null
	while kill -0 "$PID" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$STOP_WAIT" ]; then
			log "pid $PID still running ${STOP_WAIT}s after SIGTERM; sending SIGKILL"
			kill -KILL "$PID" 2>/dev/null
		fi
		sleep 0.5
	done
	wait "$PID" 2>/dev/null
	STOP_RC=$?
	STOP_S=$((SECONDS - t0))
}

# wait_caught_up PHASE: polls until caught up; sets CAUGHT (1/0), UP_S (time
# until healthz first answered; polled every second until then), FIRST_S (the
# first of the two polls that agreed), READY_S (the second: caught up), LAST.
wait_caught_up() {
	local phase=$1 t0=$SECONDS prev="" prev_s="" cur j rss hwm
	CAUGHT=0 UP_S="" FIRST_S="" READY_S="" LAST=""
	while :; do
		if ! kill -0 "$PID" 2>/dev/null; then
			log "$phase: server exited"
			return
		fi
		j=$(healthz)
		rss=$(status_kb "$PID" VmRSS)
		hwm=$(status_kb "$PID" VmHWM)
		echo -e "$(date +%H:%M:%S)\t$phase\t$((SECONDS - t0))\t$rss\t$hwm\t$j" >> "$SAMPLES"
		if [ -n "$j" ] && echo "$j" | jq -e . >/dev/null 2>&1; then
			[ -z "$UP_S" ] && UP_S=$((SECONDS - t0))
			LAST=$j
			cur=$(echo "$j" | jq -r '.semantic as $s |
				if ($s.pending == 0 and $s.chunks > 0 and $s.vectors == $s.chunks
				    and ($s.building // "") == "" and ($s.error // "") == ""
				    and ($s.index // "") != "packed")
				then "\(.seq) \($s | tojson)" else "" end')
			if [ -n "$cur" ] && [ "$cur" = "$prev" ]; then
				CAUGHT=1
				FIRST_S=$prev_s
				READY_S=$((SECONDS - t0))
				return
			fi
			prev=$cur prev_s=$((SECONDS - t0))
			log "$phase: $((SECONDS - t0))s rss=${rss}kB $(echo "$j" | jq -c '.semantic')"
		fi
		if [ $((SECONDS - t0)) -ge "$MAX_WAIT" ]; then
			log "$phase: not caught up after ${MAX_WAIT}s"
			return
		fi
		if [ -z "$UP_S" ]; then sleep 1; else sleep "$POLL"; fi
	done
}

# measure PHASE: idle $IDLE s (VmRSS sampled every $POLL s meanwhile), read
# the process's figures, then (EXTRA_IDLE > 0) idle $EXTRA_IDLE s more and
# read VmRSS again: by then two forced GCs have run since the last work,
# so the scavenger's goal no longer counts the garbage of the catch-up.
measure() {
	local phase=$1 rss hwm anon file j lrss lhwm lanon t0=$SECONDS lo="" hi=""
	sample_idle() { # sample_idle UNTIL_S
		local r
		while [ $((SECONDS - t0 + POLL)) -lt "$1" ]; do
			sleep "$POLL"
			r=$(status_kb "$PID" VmRSS)
			echo -e "$(date +%H:%M:%S)\t$phase-idle\t$((SECONDS - t0))\t$r\t$(status_kb "$PID" VmHWM)\t" >> "$SAMPLES"
			track "$r"
		done
		sleep $(($1 - (SECONDS - t0) > 0 ? $1 - (SECONDS - t0) : 0))
	}
	track() {
		[ -n "$1" ] || return 0
		{ [ -z "$lo" ] || [ "$1" -lt "$lo" ]; } && lo=$1
		{ [ -z "$hi" ] || [ "$1" -gt "$hi" ]; } && hi=$1
		return 0
	}
	log "$phase: caught up; idle ${IDLE}s (+${EXTRA_IDLE}s)"
	sample_idle "$IDLE"
	rss=$(status_kb "$PID" VmRSS); hwm=$(status_kb "$PID" VmHWM)
	anon=$(status_kb "$PID" RssAnon); file=$(status_kb "$PID" RssFile)
	track "$rss"
	j=$(healthz)
	echo -e "$(date +%H:%M:%S)\t$phase-final\t$((SECONDS - t0))\t$rss\t$hwm\t$j" >> "$SAMPLES"
	[ -n "$j" ] && LAST=$j
	lrss=$rss lhwm=$hwm lanon=$anon
	if [ "$EXTRA_IDLE" -gt 0 ]; then
		sample_idle $((IDLE + EXTRA_IDLE))
		lrss=$(status_kb "$PID" VmRSS); lhwm=$(status_kb "$PID" VmHWM); lanon=$(status_kb "$PID" RssAnon)
		track "$lrss"
		j=$(healthz)
		echo -e "$(date +%H:%M:%S)\t$phase-late\t$((SECONDS - t0))\t$lrss\t$lhwm\t$j" >> "$SAMPLES"
		[ -n "$j" ] && LAST=$j
	fi
	echo "vmrss_kb=$rss vmrss_mib=$((rss / 1024)) vmhwm_kb=$hwm vmhwm_mib=$((hwm / 1024)) rssanon_kb=$anon rssfile_kb=$file" \
		"late_at_s=$((IDLE + EXTRA_IDLE)) late_vmrss_kb=$lrss late_vmrss_mib=$((lrss / 1024)) late_vmhwm_kb=$lhwm late_rssanon_kb=$lanon" \
		"idle_rss_min_kb=$lo idle_rss_max_kb=$hi" \
		"messages=$(echo "$LAST" | jq -r '.messages') seq=$(echo "$LAST" | jq -r '.seq')" \
		"semantic=$(echo "$LAST" | jq -c '.semantic')"
}

log "copying $TEMPLATE to $DATA"
cp -a "$TEMPLATE" "$DATA" || { result "phase=error what=copy"; exit 1; }
SIZE0=$(du -sb "$DATA" | cut -f1)
COMMON="bin=$BIN template=$TEMPLATE data_bytes=$SIZE0 run=$RUN"

# Phase 1: from the messages-only data dir to a caught-up semantic index.
start_server "$RUN/serve1.log"
wait_caught_up catchup
if [ "$CAUGHT" = 1 ]; then
	M=$(measure catchup)
	result "phase=catchup $M up_s=$UP_S first_caught_up_s=$FIRST_S catchup_s=$READY_S idle_s=$IDLE $COMMON"
else
	rss=$(status_kb "$PID" VmRSS); hwm=$(status_kb "$PID" VmHWM)
	result "phase=catchup FAILED alive=$(kill -0 "$PID" 2>/dev/null && echo yes || echo no) vmrss_kb=$rss vmhwm_kb=$hwm waited_s=$MAX_WAIT last=$(echo "${LAST:-null}" | jq -c '.semantic' 2>/dev/null) log_tail=$(tail -c 400 "$RUN/serve1.log" | tr '\n' ' ') $COMMON"
fi
stop_server
SIZE1=$(du -sb "$DATA" | cut -f1)
result "phase=stop1 shutdown_s=$STOP_S exit=$STOP_RC data_bytes_after=$SIZE1 snapshots=$(snapfiles) warn_lines=$(grep -c 'level=\(WARN\|ERROR\)' "$RUN/serve1.log")"

# Phase 2: restart on the same dir (the snapshot now holds the semantic section).
if [ "$RESTART" = 1 ] && [ "$CAUGHT" = 1 ]; then
	start_server "$RUN/serve2.log"
	wait_caught_up restart
	if [ "$CAUGHT" = 1 ]; then
		M=$(measure restart)
		result "phase=restart $M healthz_up_s=$UP_S first_caught_up_s=$FIRST_S ready_s=$READY_S idle_s=$IDLE $COMMON"
	else
		rss=$(status_kb "$PID" VmRSS); hwm=$(status_kb "$PID" VmHWM)
		result "phase=restart FAILED alive=$(kill -0 "$PID" 2>/dev/null && echo yes || echo no) vmrss_kb=$rss vmhwm_kb=$hwm last=$(echo "${LAST:-null}" | jq -c '.semantic' 2>/dev/null) log_tail=$(tail -c 400 "$RUN/serve2.log" | tr '\n' ' ') $COMMON"
	fi
	stop_server
	result "phase=stop2 shutdown_s=$STOP_S exit=$STOP_RC data_bytes_after=$(du -sb "$DATA" | cut -f1) snapshots=$(snapfiles) warn_lines=$(grep -c 'level=\(WARN\|ERROR\)' "$RUN/serve2.log")"
fi

if [ "$KEEP" != 1 ]; then
	rm -rf "$DATA"
	log "removed $DATA (KEEP=1 keeps it)"
fi
log "done; samples in $SAMPLES"
