package cli

import (
	"encoding"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// outputKinds are the objects the read commands print with -o json|yaml, in the order docs/output.md lists them.
var outputKinds = []struct {
	kind    string
	typ     reflect.Type
	command string
}{
	{"Top", reflect.TypeOf(Top{}), "top --once -o json"},
	{"WhyPending", reflect.TypeOf(WhyPending{}), "why-pending POD -o json"},
	{"WhatIf", reflect.TypeOf(WhatIf{}), "what-if … -o json"},
	{"Lint", reflect.TypeOf(Lint{}), "lint -o json"},
	{"Version", reflect.TypeOf(Version{}), "version -o json"},
}

// schemaRow is one field of a kind as docs/output.md lists it.
type schemaRow struct {
	path, typ, doc string
}

const modulePath = "github.com/kubectl-hami/kubectl-hami/"

var (
	timeType      = reflect.TypeOf(time.Time{})
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textType      = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	camelCase     = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
)

// schemaWalker lists the JSON fields reachable from a type, with the Go comments of the fields as descriptions.
type schemaWalker struct {
	docs  fieldDocs
	rows  []schemaRow
	stack map[reflect.Type]bool
	bad   []string // fields without a camelCase json name
}

func (w *schemaWalker) walk(prefix string, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wire, wired := wireTypes[t]
	if t.Kind() != reflect.Struct || t == timeType || !wired && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) {
		return
	}
	if w.stack[t] {
		return
	}
	w.stack[t] = true
	defer delete(w.stack, t)
	from := t // the struct whose fields are written
	if wired {
		from = wire
	}
	var fields []reflect.StructField
	for i := 0; i < from.NumField(); i++ {
		fields = append(fields, from.Field(i))
	}
	for _, f := range fields {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			w.walk(prefix, f.Type)
			continue
		}
		path := prefix + name
		if name == "" || !camelCase.MatchString(name) {
			w.bad = append(w.bad, fmt.Sprintf("%s.%s (json %q) reached at %s", t, f.Name, tag, prefix+f.Name))
			path = prefix + f.Name
		}
		typ, elem := jsonType(f.Type)
		doc := w.docs.get(t, f.Name)
		if doc == "" && wired {
			doc = w.docs.get(wire, f.Name) // a field only the written struct has
		}
		w.rows = append(w.rows, schemaRow{path: path, typ: typ, doc: doc})
		if elem != nil {
			sub := path + "."
			if strings.HasSuffix(typ, "[]") || strings.HasPrefix(typ, "array") {
				sub = path + "[]."
			} else if strings.HasPrefix(typ, "map") {
				sub = path + ".*."
			}
			w.walk(sub, elem)
		}
	}
}

// wireTypes are the engine's types that write themselves (MarshalJSON) as a struct of fields, with that struct
// (engine.WireTypes): the verdict writes its fitting nodes and node statuses (methods) where the fields stood,
// a pod's allocation its MIG instances and other types' quota charges. A field of the written struct that the
// type does not have is documented by its comment there.
var wireTypes = engine.WireTypes()

// jsonType names t as JSON sees it, and the struct to descend into (nil for none).
func jsonType(t reflect.Type) (string, reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "string (RFC 3339 time)", nil
	case wireTypes[t] != nil:
		return "object", t
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) || t.Implements(textType):
		return "string", nil
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", nil
	case reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Slice, reflect.Array:
		et, sub := jsonType(t.Elem())
		if sub != nil {
			return "object[]", sub
		}
		return et + "[]", nil
	case reflect.Map:
		et, sub := jsonType(t.Elem())
		if sub != nil {
			return "map of object", sub
		}
		return "map of " + et, nil
	case reflect.Struct:
		return "object", t
	case reflect.Interface:
		return "any", nil
	}
	return t.Kind().String(), nil
}

// fieldDocs reads the comments of struct fields from the module's sources, package by package.
type fieldDocs map[string]map[string]string // package path -> "Type.Field" -> comment

func (d fieldDocs) get(t reflect.Type, field string) string {
	pkg := t.PkgPath()
	if _, ok := d[pkg]; !ok {
		d[pkg] = map[string]string{}
		if strings.HasPrefix(pkg, modulePath) {
			d.parse(pkg, filepath.Join("..", "..", strings.TrimPrefix(pkg, modulePath)))
		}
	}
	return d[pkg][t.Name()+"."+field]
}

func (d fieldDocs) parse(pkg, dir string) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return
		}
		files = append(files, f)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				text := ""
				if fl.Doc != nil {
					text = fl.Doc.Text()
				}
				if fl.Comment != nil {
					text = strings.TrimSpace(text + " " + fl.Comment.Text())
				}
				text = strings.Join(strings.Fields(text), " ")
				for _, name := range fl.Names {
					d[pkg][ts.Name.Name+"."+name.Name] = text
				}
			}
			return true
		})
	}
}

// schemaTable is the markdown reference table of one kind.
func schemaTable(t *testing.T, typ reflect.Type) string {
	t.Helper()
	w := &schemaWalker{docs: fieldDocs{}, stack: map[reflect.Type]bool{}}
	w.walk("", typ)
	if len(w.bad) > 0 {
		sort.Strings(w.bad)
		t.Errorf("%s: fields without a camelCase json name:\n  %s", typ.Name(), strings.Join(w.bad, "\n  "))
	}
	var b strings.Builder
	b.WriteString("| Field | Type | Meaning |\n|---|---|---|\n")
	for _, r := range w.rows {
		doc := strings.ReplaceAll(r.doc, "|", `\|`)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.path, r.typ, doc)
	}
	return b.String()
}

// TestOutputSchemaDocumented: every field reachable from -o json|yaml has a camelCase JSON name, and
// docs/output.md lists exactly those fields for each kind (go test ./internal/cli/ -run TestOutputSchema -update
// rewrites the tables from the types and their comments).
func TestOutputSchemaDocumented(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "output.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, k := range outputKinds {
		begin, end := "<!-- schema:"+k.kind+" -->\n", "<!-- /schema:"+k.kind+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Errorf("%s: no %q … %q block", path, strings.TrimSpace(begin), end)
			continue
		}
		want := schemaTable(t, k.typ)
		if got := doc[i+len(begin) : j]; got != want {
			if *update {
				doc = doc[:i+len(begin)] + want + doc[j:]
				continue
			}
			t.Errorf("%s: the %s table differs from the types (want: the doc, got: the types; run with -update):\n%s", path, k.kind, diff(got, want))
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMachineOutputGolden pins -o json|yaml of each kind on the demo cluster, and checks that every key the
// output has is a field docs/output.md documents for its kind (a custom marshaller or a map cannot add names the
// reference does not list).
func TestMachineOutputGolden(t *testing.T) {
	cases := []struct {
		golden string
		kind   string
		args   []string
	}{
		{"top.json", "Top", []string{"top", "--demo", "-o", "json"}},
		{"why-pending-running.json", "WhyPending", []string{"why-pending", "llm-serve-1", "-n", "inference", "--demo", "-o", "json"}},
		{"why-pending-quota.json", "WhyPending", []string{"why-pending", "llm-serve-2", "-n", "inference", "--demo", "-o", "json"}},
		{"what-if-fits.yaml", "WhatIf", []string{"what-if", "--demo", "-n", "team-vision", "--gpus", "1", "--gpumem", "10000", "-o", "yaml"}},
		{"what-if-fits.json", "WhatIf", []string{"what-if", "--demo", "-n", "team-vision", "--gpus", "1", "--gpumem", "10000", "-o", "json"}},
		{"lint-demo.json", "Lint", []string{"lint", "--demo", "-o", "json"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			if err != nil && tc.kind != "Lint" {
				t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
			}
			checkGolden(t, tc.golden, tc.args, out)
			if !strings.HasSuffix(tc.golden, ".json") {
				return
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			var typ reflect.Type
			for _, k := range outputKinds {
				if k.kind == tc.kind {
					typ = k.typ
				}
			}
			w := &schemaWalker{docs: fieldDocs{}, stack: map[reflect.Type]bool{}}
			w.walk("", typ)
			types := map[string]string{}
			for _, r := range w.rows {
				types[r.path] = r.typ
			}
			documented := len(types)
			for _, p := range jsonPaths("", v, types) {
				if _, ok := types[p]; !ok {
					t.Errorf("%v prints %s, which docs/output.md does not list for %s", tc.args, p, tc.kind)
				}
			}
			if documented < 5 {
				t.Fatalf("%s: only %d documented fields", tc.kind, documented)
			}
		})
	}
}

// jsonPaths lists the field paths of a decoded JSON value in the notation of docs/output.md.
func jsonPaths(prefix string, v any, types map[string]string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + k
			if parent := types[strings.TrimSuffix(prefix, ".")]; strings.HasPrefix(parent, "map of ") {
				p = prefix + "*"
				if inner := strings.TrimPrefix(parent, "map of "); strings.HasPrefix(inner, "map of ") {
					types[p] = inner // a map of maps: the values are maps too
				}
			}
			out = append(out, p)
			out = append(out, jsonPaths(p+".", e, types)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, jsonPaths(strings.TrimSuffix(prefix, ".")+"[].", e, types)...)
		}
	}
	return out
}
