#!/usr/bin/env bash
# test_git_version.sh — SCALING_GIT_VERSION enters the build as a C string literal (cmake/git_version.cmake): quotes,
# backslashes, newlines, a "#include" and trigraph-like "??" can neither break the header nor add code to it, and the
# compiled string is the value with unprintable characters as '?'. Runs on CI (cmake and a C compiler).
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || { echo "no C compiler: skipped"; exit 77; }
printf '#include <stdio.h>\n#include "git_version.h"\nint main(void) { fputs(GIT_VERSION, stdout); return 0; }\n' \
    > "$tmp/main.c"
check() {   # check VALUE EXPECTED
    rm -f "$tmp/git_version.h" "$tmp/main"
    SCALING_GIT_VERSION=$1 cmake -DSRC="$root" -DOUT="$tmp/git_version.h" -P "$root/cmake/git_version.cmake" &&
        cc -I"$tmp" "$tmp/main.c" -o "$tmp/main" 2>"$tmp/cc.err" && got=$("$tmp/main") && [ "$got" = "$2" ] &&
        [ "$(wc -l <"$tmp/git_version.h")" -eq 1 ]
    if [ $? -eq 0 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: SCALING_GIT_VERSION=$(printf %q "$1"): got $(printf %q "${got:-}")"
        cat "$tmp/git_version.h" "$tmp/cc.err" 2>/dev/null
    fi
}
check 'abc1234-dirty' 'abc1234-dirty'
check 'a"b' 'a"b'
check 'back\slash\' 'back\slash\'
check $'two\nlines #include <stdlib.h>' 'two?lines #include <stdlib.h>'
check '" ; int injected = 1; //' '" ; int injected = 1; //'
check 'what??=' 'what??='
check $'tab\there' 'tab?here'
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
