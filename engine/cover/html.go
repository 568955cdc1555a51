package cover

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// WriteHTML writes a page in the style of `go tool cover -html`: a file
// selector with each file's share of statements reached, and each file's
// source with the lines that ran green and those that never ran red
// (what no block covers is grey), with line numbers. It needs nothing
// but itself: the styles and the script are in it. A file whose source
// src cannot find is left out and named at the top.
func WriteHTML(w io.Writer, p *Profile, src Source, title string) error {
	r := NewReport(p, src)
	page := htmlPage{Title: title, Hit: r.Hit, Stmts: r.Stmts, Percent: Percent(r.Hit, r.Stmts)}
	i := 0
	for blocks := range fileBlocks(p) {
		f := r.Files[i]
		i++
		if !f.Found {
			page.Missing = append(page.Missing, f.File)
			continue
		}
		b, err := src(f.File)
		if err != nil {
			page.Missing = append(page.Missing, f.File)
			continue
		}
		page.Files = append(page.Files, htmlFile{ID: fmt.Sprintf("file%d", len(page.Files)), Name: f.Name,
			Percent: Percent(f.Hit, f.Stmts), Body: colorSource(b, blocks)})
	}
	return pageTmpl.Execute(w, page)
}

type htmlPage struct {
	Title      string
	Hit, Stmts int
	Percent    float64
	Files      []htmlFile
	Missing    []string
}

type htmlFile struct {
	ID      string
	Name    string
	Percent float64
	Body    template.HTML
}

// What a byte of source is on the page.
const (
	untracked = iota
	notReached
	reached
)

// colorSource is a file's source as HTML, each line numbered, the text of
// each block in the class of what it is: cov8 reached, cov0 not. A byte
// in a block that ran and in one that did not (two programs' blocks that
// overlap) is reached.
func colorSource(src []byte, blocks []Block) template.HTML {
	lineStart := []int{0}
	for i, c := range src {
		if c == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	// offset is where line.col is in src; a place past the end (the
	// source changed since the run) is at the end.
	offset := func(line, col uint32) int {
		if line == 0 || int(line) > len(lineStart) {
			return len(src)
		}
		return min(lineStart[line-1]+int(col)-1, len(src))
	}
	state := make([]byte, len(src))
	for _, b := range blocks {
		s := byte(notReached)
		if b.Hit {
			s = reached
		}
		for i := offset(b.StLine, b.StCol); i < offset(b.EnLine, b.EnCol); i++ {
			state[i] = max(state[i], s)
		}
	}
	class := [...]string{untracked: "", notReached: "cov0", reached: "cov8"}
	var out bytes.Buffer
	width := len(fmt.Sprint(len(lineStart)))
	for n, start := range lineStart {
		end := len(src)
		if n+1 < len(lineStart) {
			end = lineStart[n+1] - 1
		}
		if n > 0 && start == len(src) { // after the last newline
			break
		}
		fmt.Fprintf(&out, `<span class="ln">%*d</span>  `, width, n+1)
		for i := start; i < end; {
			j := i + 1
			for j < end && state[j] == state[i] {
				j++
			}
			text := template.HTMLEscapeString(strings.TrimSuffix(string(src[i:j]), "\r"))
			if c := class[state[i]]; c != "" {
				fmt.Fprintf(&out, `<span class="%s">%s</span>`, c, text)
			} else {
				out.WriteString(text)
			}
			i = j
		}
		out.WriteByte('\n')
	}
	return template.HTML(out.String())
}

var pageTmpl = template.Must(template.New("cover").Parse(`<!DOCTYPE html>
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{{.Title}}: coverage</title>
<style>
body { background: black; color: rgb(80, 80, 80); margin: 0; padding-top: 50px; }
body, pre, #legend span, select { font-family: Menlo, monospace; font-weight: bold; }
#topbar { background: black; position: fixed; top: 0; left: 0; right: 0; height: 42px; border-bottom: 1px solid rgb(80, 80, 80);
	display: flex; align-items: center; gap: 10px; padding: 0 10px; white-space: nowrap; overflow: hidden; }
#content { margin: 0 10px 10px 10px; }
pre { margin: 0; }
pre.file { scroll-margin-top: 50px; } /* a link to a file scrolls it to just under the bar */
#legend span { margin: 0 5px; }
#total { margin-left: auto; }
#missing { color: rgb(160, 160, 160); }
.ln { color: rgb(60, 60, 60); user-select: none; }
.cov0 { color: rgb(192, 0, 0); }
.cov8 { color: rgb(44, 212, 149); }
</style>
</head>
<body>
<div id="topbar">
<div id="nav"><select id="files">
{{- range .Files}}
<option value="{{.ID}}">{{.Name}} ({{printf "%.1f" .Percent}}%)</option>
{{- end}}
</select></div>
<div id="legend"><span>not tracked</span> <span class="cov0">never reached</span> <span class="cov8">reached</span></div>
<div id="total">{{.Title}}: {{.Hit}} of {{.Stmts}} statements ({{printf "%.1f" .Percent}}%)</div>
</div>
<div id="content">
{{- if .Missing}}
<p id="missing">Source not found, not shown:{{range .Missing}} {{.}}{{end}}</p>
{{- end}}
{{- range .Files}}
<pre class="file" id="{{.ID}}" style="display: none">
{{.Body}}</pre>
{{- end}}
</div>
<script>
(function() {
	var files = document.getElementById('files');
	var visible;
	files.addEventListener('change', function() { select(files.value); window.scrollTo(0, 0); }, false);
	function select(id) {
		var el = document.getElementById(id);
		if (!el || !el.classList.contains('file')) return;
		if (visible) visible.style.display = 'none';
		visible = el;
		files.value = id;
		visible.style.display = 'block';
		history.replaceState(null, '', '#' + id);
	}
	if (location.hash != "") select(location.hash.substr(1));
	if (!visible) select("file0");
})();
</script>
</body>
</html>
`))
