# shellcheck shell=bash
# lib_faults.sh — what the fault tests share (gpu_faults.sh, gpu_faults_mpi.sh): a CSV's rows as TSV (`scaling tsv`:
# the reason cell holds commas), one line per run, and a wait for a file to reach some rows. Sourced after lib_gpu.sh
# (bin, root, tmp, check set; scaling, the binary that reads a CSV, where bin is another); not a test itself.
scaling=${scaling:-$bin}

# runs CSV: one line per run in file order: "lr|run_id|epochs|statuses|last reason" (| between fields: the reason
# holds spaces).
runs() {
    "$scaling" tsv "$1" 2>/dev/null | awk -F'\t' '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { r = $c["run_id"]; if (!(r in e)) { n++; id[n] = r; lr[r] = $c["lr"] }
          e[r] = e[r] (e[r] == "" ? "" : ",") $c["epoch"]; s[r] = s[r] (s[r] == "" ? "" : ",") $c["status"]
          why[r] = $c["reason"] }
        END { for (i = 1; i <= n; i++) print lr[id[i]] "|" id[i] "|" e[id[i]] "|" s[id[i]] "|" why[id[i]] }'
}
# cells CSV NAME: the column's cells, one per row (through `scaling tsv`)
cells() {
    "$scaling" tsv "$1" 2>/dev/null |
        awk -F'\t' -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next } { print $c }'
}
# rows_of CSV: data rows
rows_of() { [ -f "$1" ] && echo $(($(wc -l <"$1") - 1)) || echo 0; }
# wait_rows CSV N PID SECONDS: until CSV has N data rows (0), PID ended (1) or SECONDS passed (2)
wait_rows() {
    local deadline=$((SECONDS + $4))
    while ((SECONDS < deadline)); do
        (($(rows_of "$1") >= $2)) && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.05
    done
    return 2
}
# seconds_since T0 (from date +%s.%N): elapsed seconds, 1 decimal
seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# proc_state PID: "STATE STARTTIME" of a live process (fields 3 and 22 of /proc/PID/stat; the start in clock ticks
# since boot), nothing where there is none. Builtins only: no fork that a loaded machine could refuse. A pid alone
# names another process once it is reused (pids wrap fast on a busy machine): the start time tells them apart.
proc_state() {
    local line
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
    set -- ${line##*) }
    [ $# -ge 20 ] && echo "$1 ${20}"
}
# gone PID [STARTTIME]: the process is gone, or a zombie (a reaper may be slow, or absent in a container); with
# STARTTIME, also when PID now names another process
gone() {
    local now
    now=$(proc_state "$1")
    [ -z "$now" ] && return 0
    [ -n "${2:-}" ] && [ "${now#* }" != "$2" ] && return 0
    [ "${now%% *}" = Z ]
}
# kill_same SIGNAL PID [STARTTIME]: signals the process only while PID still names it
kill_same() { gone "$2" "${3:-}" || kill "-$1" "$2" 2>/dev/null; }
