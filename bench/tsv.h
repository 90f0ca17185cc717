/* tsv.h — `scaling tsv FILE`: any CSV as TSV on stdout, read by libcsv as every reader of the project reads a CSV,
 * for the shell scripts and tests that pick columns by header name (study rows, Nsight Systems' summaries).
 * Host-only. */
#pragma once

/* Writes FILE ("-": stdin) as TSV to stdout: the header, then each record with the header's field count, a tab, CR or
 * line feed inside a cell written as a space, an unquoted cell without the blanks around it and a blank line no record
 * (as libcsv reads them); a record with another field count (a line cut short by a kill) is left out and counted in
 * one line on stderr. 0; 2 with one line on stderr for bad usage or an unreadable file. */
int tsv_main(int argc, char **argv);
