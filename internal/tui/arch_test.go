package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The UI's architecture (common.go): views get a narrow context, not the Model; they talk by messages, never
// by another view's fields; the data layer (world, podstore, live, data, queries) knows nothing of views. This test
// reads internal/tui's source (go/ast) and holds it to that.

// dataLayerFiles are the UI's data layer: they may not name a view, the views' context or the Model.
var dataLayerFiles = []string{"world.go", "podstore.go", "live.go", "data.go", "queries.go"}

// TestArchitecture: the package's own source breaks no rule.
func TestArchitecture(t *testing.T) {
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = f
	}
	got := archViolations(files)
	for _, v := range got {
		t.Error(v)
	}
	// The rules must see the views at all: a rename that hid them would pass every rule.
	views := viewTypes(files)
	for _, want := range []string{"nodesView", "nodeView", "gpuPage", "pendingView", "verdictPage", "quotasView", "queuesView", "whatIfView"} {
		if !views[want] {
			t.Errorf("the architecture test does not see view %s (found %v)", want, keys(views))
		}
	}
}

// TestArchitectureCatchesBreaches: each rule fails on source that breaks it.
func TestArchitectureCatchesBreaches(t *testing.T) {
	src := `package tui
type aView struct{ n *bView }
func (v *aView) info() viewInfo { return viewInfo{} }
func (v *aView) setData(m *Model) {}
func (v *aView) drill(c *common) { viewOf[*bView](nil).x = 1 }
type bView struct{ x int }
func (v *bView) info() viewInfo { return viewInfo{} }
func (v *bView) update(c *common) { var w *world; _ = w }
type common struct{ other *aView }
type pokeMsg struct{ target *bView }
func (c *common) helper() { _ = registry }
`
	data := `package tui
func (w *world) leak(c *common) {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "views.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parser.ParseFile(fset, "world.go", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(archViolations(map[string]*ast.File{"views.go": f, "world.go": d}), "\n")
	for _, want := range []string{
		"aView.setData: reaches Model",
		"aView.drill: reaches viewOf",
		"aView.drill: names view bView",
		"bView.update: reaches world",
		"aView: field names view bView",
		"common: field names view aView",
		"pokeMsg: field names view bView",
		"common.helper: reaches registry",
		"world.go: world.leak: reaches common",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no violation %q in:\n%s", want, got)
		}
	}
}

// viewTypes are the types with an info() viewInfo method, and the bases views embed.
func viewTypes(files map[string]*ast.File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "info" || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
				continue
			}
			if id, ok := fd.Type.Results.List[0].Type.(*ast.Ident); ok && id.Name == "viewInfo" {
				out[recvName(fd)] = true
			}
		}
	}
	return out
}

// viewBases are embedded in views; their methods are the views' own.
var viewBases = []string{"tableView", "page"}

// archViolations lists every breach of the UI's architecture in files (by file name).
func archViolations(files map[string]*ast.File) []string {
	views := viewTypes(files)
	isView := func(n string) bool { return views[n] || slices.Contains(viewBases, n) }
	var out []string
	// banned is what a view's code, or the context's, may not name: the Model, the data layer's concrete world
	// (views ask it through common.world's interface), the lookup of views, the registry.
	banned := []string{"Model", "world", "viewOf", "registry"}
	check := func(file, where string, node ast.Node, self string) {
		seen := map[string]bool{}
		identsOf(node, func(id string) { seen[id] = true })
		for id := range seen {
			switch {
			case slices.Contains(banned, id):
				out = append(out, file+": "+where+": reaches "+id)
			case id != self && views[id]:
				out = append(out, file+": "+where+": names view "+id)
			}
		}
	}
	for file, f := range files {
		data := slices.Contains(dataLayerFiles, file)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				recv := recvName(d)
				where := d.Name.Name
				if recv != "" {
					where = recv + "." + d.Name.Name
				}
				switch {
				case data:
					dataLayerCheck(file, where, d.Type, views, &out)
					if d.Body != nil {
						dataLayerCheck(file, where, d.Body, views, &out)
					}
				case isView(recv), recv == "common", takesCommon(d):
					check(file, where, d.Type, recv)
					if d.Body != nil {
						check(file, where, d.Body, recv)
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					name := ts.Name.Name
					if data {
						dataLayerCheck(file, name, ts, views, &out)
						continue
					}
					if !ok || !(isView(name) || name == "common" || strings.HasSuffix(name, "Msg")) {
						continue
					}
					for _, fl := range st.Fields.List {
						identsOf(fl.Type, func(id string) {
							switch {
							case id != name && views[id]:
								out = append(out, file+": "+name+": field names view "+id)
							case id == "view" || slices.Contains(banned[:2], id):
								out = append(out, file+": "+name+": field holds "+id)
							}
						})
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// dataLayerCheck: the data layer names no view, no view context, no Model.
func dataLayerCheck(file, where string, node ast.Node, views map[string]bool, out *[]string) {
	seen := map[string]bool{}
	identsOf(node, func(id string) { seen[id] = true })
	for id := range seen {
		if views[id] || id == "common" || id == "Model" || id == "view" || id == "viewInfo" {
			*out = append(*out, file+": "+where+": reaches "+id)
		}
	}
}

// identsOf calls f with every identifier node refers to by name: not the names after a dot (c.world, a
// field or method; viewport.Model, another package's type), which name nothing of this package's scope.
func identsOf(node ast.Node, f func(string)) {
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			identsOf(n.X, f)
			return false
		case *ast.Ident:
			f(n.Name)
		}
		return true
	})
}

// recvName is the receiver's type name ("" for a function).
func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// takesCommon is a function with a *common parameter: view code outside a method.
func takesCommon(fd *ast.FuncDecl) bool {
	if fd.Recv != nil {
		return false
	}
	for _, p := range fd.Type.Params.List {
		if s, ok := p.Type.(*ast.StarExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == "common" {
				return true
			}
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
