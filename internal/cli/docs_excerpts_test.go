package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// excerpt is one fenced block of README.md or docs/*.md that starts with "$ kubectl hami ...": a command and
// what the docs say it prints.
type excerpt struct {
	file   string
	line   int      // the command's line, 1-based
	args   []string // after "kubectl hami"
	want   []string // the block's other lines
	world  string   // <!-- excerpt-world: NAME -->: run on that world's snapshot
	reason string   // <!-- excerpt-unchecked: REASON -->: shown but not run, and why
}

// excerptWorlds are the in-code worlds an excerpt may name: a live-cluster sample is checked on the snapshot of
// the same objects.
var excerptWorlds = map[string]func() []byte{
	"kube-gates": tb.KubeGatesDemo, // issue 25's repro: a cordoned, a tainted and a selected-away node
}

var excerptMarker = regexp.MustCompile(`^<!-- excerpt-(world|unchecked): (.*?) -->$`)

// readExcerpts finds every "$ kubectl hami" block of a Markdown file, with the marker on the line above its fence.
func readExcerpts(t *testing.T, path string) []excerpt {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []excerpt
	var cur *excerpt // the block being read, once its first line is a command
	inFence, first, marker, prev, n := false, false, "", "", 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```") && !inFence:
			inFence, first, cur, marker = true, true, nil, prev
		case strings.HasPrefix(line, "```"):
			if cur != nil {
				out = append(out, *cur)
			}
			inFence, cur = false, nil
		case inFence && (first || cur != nil) && strings.HasPrefix(line, "$ kubectl hami "):
			// A block may hold several commands, each followed by what it prints.
			first = false
			if cur != nil {
				out = append(out, *cur)
			}
			args, err := splitShell(strings.TrimPrefix(line, "$ kubectl hami "))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			cur = &excerpt{file: path, line: n, args: args}
			if m := excerptMarker.FindStringSubmatch(marker); m != nil && m[1] == "world" {
				cur.world = m[2]
			} else if m != nil {
				cur.reason = m[2]
			}
		case cur != nil && strings.HasPrefix(line, "$ "):
			out = append(out, *cur) // another command ($ echo $?) ends what this one prints
			cur = nil
		case inFence && first:
			first = false // a block that does not open with a command is not an excerpt
		case cur != nil:
			cur.want = append(cur.want, line)
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// splitShell splits a command line as a POSIX shell would for the words the docs use: spaces, and single or
// double quotes around a word.
func splitShell(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		out = append(out, w.String())
	}
	return out, nil
}

// matchExcerpt reports whether got holds want's lines: a line "..." stands for lines left out; every other run
// of lines must appear in got, contiguous, in order (trailing spaces ignored). It returns the first run missing.
func matchExcerpt(got string, want []string) (string, bool) {
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	var runs [][]string
	cur := []string{}
	for _, w := range want {
		if strings.TrimSpace(w) == "..." {
			if len(cur) > 0 {
				runs = append(runs, cur)
			}
			cur = []string{}
			continue
		}
		cur = append(cur, strings.TrimRight(w, " "))
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	at := 0
	for ri, run := range runs {
		found := -1
		for i := at; i+len(run) <= len(lines); i++ {
			ok := true
			for j := range run {
				if lines[i+j] != run[j] {
					ok = false
					break
				}
			}
			if ok {
				found = i
				break
			}
		}
		// The first run must start the output unless the excerpt opens with "...": the docs show the head.
		if found < 0 || (ri == 0 && at == 0 && found != 0 && strings.TrimSpace(want[0]) != "...") {
			return strings.Join(run, "\n"), false
		}
		at = found + len(run)
	}
	return "", true
}

// TestDocsExcerpts: every "$ kubectl hami ..." sample in README.md and docs/ is the binary's real output on the
// demo, the named snapshot file, or the world its marker names; a sample that cannot be run here says why in an
// <!-- excerpt-unchecked: REASON --> marker.
func TestDocsExcerpts(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	for i := range files {
		if files[i], err = filepath.Abs(files[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Commands run from the repository root, as the docs show them (a --snapshot path is the root's).
	t.Chdir(root)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		for _, e := range readExcerpts(t, file) {
			rel, _ := filepath.Rel(wd, e.file)
			where := fmt.Sprintf("%s:%d", rel, e.line)
			if e.reason != "" {
				t.Logf("%s: not run: %s", where, e.reason)
				continue
			}
			args, err := excerptArgs(t, e)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			// A non-zero exit is part of some samples (lint's findings, --exit-code); an error that prints
			// nothing is not.
			out, errOut, err := run(t, args...)
			if err != nil && out == "" {
				t.Errorf("%s: kubectl hami %s: %v\n%s", where, strings.Join(e.args, " "), err, errOut)
				continue
			}
			// The terminal shows standard error after standard output, and the command's error as main prints
			// it (lint's "error: lint found ...").
			if err != nil {
				errOut += "error: " + err.Error() + "\n"
			}
			if miss, ok := matchExcerpt(out+errOut, e.want); !ok {
				t.Errorf("%s: kubectl hami %s: the docs show lines the command does not print:\n%s\n--- the command prints:\n%s",
					where, strings.Join(e.args, " "), miss, out)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d docs excerpts checked: the reader found fewer than the docs hold", checked)
	}
	t.Logf("%d docs excerpts checked against the binary", checked)
}

// excerptArgs are the arguments an excerpt runs with: the demo as written, a snapshot path read from the
// working directory (the repository root), or the marker's world written to a file (replacing the --snapshot the docs show).
func excerptArgs(t *testing.T, e excerpt) ([]string, error) {
	args := append([]string(nil), e.args...)
	if e.world != "" {
		gen, ok := excerptWorlds[e.world]
		if !ok {
			return nil, fmt.Errorf("unknown excerpt world %q", e.world)
		}
		path := filepath.Join(t.TempDir(), e.world+".yaml")
		if err := os.WriteFile(path, gen(), 0o644); err != nil {
			return nil, err
		}
		for i := range args {
			if args[i] == "--snapshot" && i+1 < len(args) {
				args[i+1] = path
				return args, nil
			}
		}
		return append(args, "--snapshot", path), nil
	}
	for i := range args {
		if args[i] == "--snapshot" && i+1 < len(args) {
			if _, err := os.Stat(args[i+1]); err != nil {
				return nil, fmt.Errorf("the excerpt's snapshot: %w", err)
			}
			return args, nil
		}
		if args[i] == "--demo" {
			return args, nil
		}
	}
	return nil, fmt.Errorf("kubectl hami %s needs a live cluster: add --demo or --snapshot, or an <!-- excerpt-world: NAME --> or <!-- excerpt-unchecked: REASON --> marker above the block", strings.Join(e.args, " "))
}

func TestMatchExcerpt(t *testing.T) {
	got := "a\nb\nc\nd\n"
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"a", "b"}, true},
		{[]string{"a", "...", "d"}, true},
		{[]string{"...", "c", "d"}, true},
		{[]string{"b", "c"}, false}, // the head is left out without "..."
		{[]string{"a", "c"}, false}, // not contiguous
		{[]string{"a", "...", "e"}, false},
	} {
		if _, ok := matchExcerpt(got, c.want); ok != c.ok {
			t.Errorf("matchExcerpt(%q, %q) = %v, want %v", got, c.want, ok, c.ok)
		}
	}
}
