// Package docs_test checks the documentation against the code: the limits
// and crossovers docs/BENCHMARKS.md quotes, and the relative links of the
// docs. The folder holds no Go code besides.
package docs_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/backend/cuda"
)

// quoted is every constant BENCHMARKS.md's "Limits and crossovers" table
// may quote, with the code's value. The table must hold each of them, with
// this value: a constant the figures depend on is either here or not
// quoted at all.
var quoted = map[string]int{
	"cuda.BatchMaxTaps":     cuda.BatchMaxTaps,
	"cuda.FFTCrossoverTaps": cuda.FFTCrossoverTaps,
	"cuda.OLSMaxTaps":       cuda.OLSMaxTaps,
	"cuda.BatchMaxLanes":    cuda.BatchMaxLanes,
	"cuda.ZeroCopyMaxBlock": cuda.ZeroCopyMaxBlock,
	"cpu.MaxRetuneTaps":     cpu.MaxRetuneTaps,
}

// TestBenchmarksConstants: the values in BENCHMARKS.md's table of limits
// and crossovers are the code's.
func TestBenchmarksConstants(t *testing.T) {
	rows, err := tableRows("BENCHMARKS.md", "## Limits and crossovers")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if len(r.cells) < 2 {
			t.Errorf("BENCHMARKS.md:%d: want | `constant` | value | ..., got %q", r.line, r.cells)
			continue
		}
		name := strings.Trim(r.cells[0], "`")
		want, ok := quoted[name]
		switch {
		case !ok:
			t.Errorf("BENCHMARKS.md:%d: %s is not checked: add it to quoted in docs/docs_test.go, or drop the row", r.line, name)
		case seen[name]:
			t.Errorf("BENCHMARKS.md:%d: %s is quoted twice", r.line, name)
		case r.cells[1] != fmt.Sprint(want):
			t.Errorf("BENCHMARKS.md:%d: %s is %s in the doc, %d in the code", r.line, name, r.cells[1], want)
		}
		seen[name] = true
	}
	for name, v := range quoted {
		if !seen[name] {
			t.Errorf("BENCHMARKS.md's limits table lacks %s (%d)", name, v)
		}
	}
}

type row struct {
	line  int
	cells []string
}

// tableRows returns the body rows of the first table after the heading.
func tableRows(path, heading string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	in, header := false, 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case l == heading:
			in = true
		case !in:
		case strings.HasPrefix(l, "|"):
			if header++; header > 2 { // the header row and its |---| line
				cells := strings.Split(strings.Trim(l, "|"), "|")
				for i := range cells {
					cells[i] = strings.TrimSpace(cells[i])
				}
				rows = append(rows, row{n, cells})
			}
		case header > 0 || strings.HasPrefix(l, "#"):
			return rows, sc.Err()
		}
	}
	if !in {
		return nil, fmt.Errorf("%s: no heading %q", path, heading)
	}
	return rows, sc.Err()
}

var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks: every relative link in docs/*.md, docs/data/*.md and the
// README names a file that exists, and a #fragment into a Markdown file
// names one of its headings (GitHub's anchors).
func TestLinks(t *testing.T) {
	var files []string
	for _, g := range []string{"*.md", "data/*.md", "../README.md"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	anchors := map[string]map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for n, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, ":") { // http:, https:, mailto:
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.Join(filepath.Dir(file), path)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: %v", file, n+1, target, err)
					continue
				}
				if frag == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				if anchors[path] == nil {
					if anchors[path], err = headings(path); err != nil {
						t.Fatal(err)
					}
				}
				if !anchors[path][frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", file, n+1, target, path, frag)
				}
			}
		}
	}
}

// headings returns the anchors GitHub gives the Markdown file's headings:
// lower case, punctuation dropped, spaces to hyphens, -1, -2 … on repeats.
func headings(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	count := map[string]int{}
	fence := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if k := count[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out, nil
}
