# csv.awk — RFC 4180 CSV (as libcsv writes it: quoted only where needed, "" inside quotes) to TSV, for the Nsight
# post-processing (lib_nsys.sh) and the scripts that list rows. Quoted cells may hold commas, quotes and line
# breaks; tabs and line breaks inside a cell become spaces. Records whose field count differs from the header's (a line cut short by a kill) are dropped
# with a one-line note on stderr. POSIX awk (mawk, gawk, busybox).
#
#   awk -f scripts/csv.awk results/X.csv > X.tsv
function parse(rec,    i, c, n, field, inq, len) {
    if (index(rec, "\"") == 0) return split(rec, F, ",")
    n = 0; field = ""; inq = 0; len = length(rec)
    for (i = 1; i <= len; i++) {
        c = substr(rec, i, 1)
        if (inq) {
            if (c == "\"") {
                if (substr(rec, i + 1, 1) == "\"") { field = field "\""; i++ }
                else inq = 0
            } else field = field c
        } else if (c == "\"") inq = 1
        else if (c == ",") { F[++n] = field; field = "" }
        else field = field c
    }
    F[++n] = field
    return n
}
function quotes(s,    t) { t = s; return gsub(/"/, "", t) }
function emit(rec,    n, i, out, v) {
    n = parse(rec)
    if (ncols == 0) ncols = n
    else if (n != ncols) { dropped++; return }
    out = ""
    for (i = 1; i <= n; i++) {
        v = F[i]
        gsub(/[\t\r\n]/, " ", v)
        out = out (i > 1 ? "\t" : "") v
    }
    print out
}
{
    sub(/\r$/, "")
    if (pending != "") { pending = pending "\n" $0; open += quotes($0) }
    else { pending = $0; open = quotes($0) }
    if (open % 2) next          # inside a quoted cell: the record goes on on the next line
    emit(pending)
    pending = ""
}
END {
    if (pending != "") dropped++    # an unterminated quoted cell at the end: cut by a kill
    if (dropped) printf "csv: %s: %d record(s) with the wrong number of fields skipped (a line cut short by a kill?)\n", FILENAME, dropped > "/dev/stderr"
}
