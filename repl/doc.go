// Package repl owns Quiver's interactive SQL shell: line editing and
// persistent history (on github.com/chzyer/readline), statements that span
// lines and end at ';', meta-commands (\d, \timing, \format, ...), tab
// completion of keywords, tables and columns, result tables that fit the
// terminal with a footer, a progress line for long queries, Ctrl-C that
// cancels the running query, and syntax errors shown with a caret.
//
// repl drives a quiver.Session and prints with package format; the command
// line (cmd/quiver) only wires flags to Config.
package repl
