package main

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

const (
	pluginName  = "hami"
	binaryName  = "kubectl-hami"
	apiVersion  = "krew.googlecontainertools.github.com/v1alpha2"
	releaseBase = "https://github.com/kubectl-hami/kubectl-hami/releases/download/"
	homepage    = "https://github.com/kubectl-hami/kubectl-hami"
)

// releasePlatforms are the archives of a release, in the manifest's order.
var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// krewPlatforms are the os/arch pairs krew installs on (the list of krew's validate-krew-manifest): every
// platform selector must match one of them, and no pair may match two selectors.
var krewPlatforms = []string{
	"windows/386", "windows/amd64", "windows/arm64",
	"linux/386", "linux/amd64", "linux/arm", "linux/arm64", "linux/ppc64le",
	"darwin/386", "darwin/amd64", "darwin/arm64",
}

// Plugin is krew's index.Plugin, as much of it as this manifest uses (unknown fields are errors).
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec PluginSpec `json:"spec"`
}

// PluginSpec is krew's index.PluginSpec.
type PluginSpec struct {
	Version          string     `json:"version"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is krew's index.Platform.
type Platform struct {
	Selector *Selector `json:"selector"`
	URI      string    `json:"uri"`
	Sha256   string    `json:"sha256"`
	Files    []FileOp  `json:"files"`
	Bin      string    `json:"bin"`
}

// Selector is a label selector; krew's rules allow matchLabels on os and arch only here.
type Selector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []any             `json:"matchExpressions,omitempty"`
}

// FileOp is krew's index.FileOperation.
type FileOp struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// templateData is what hack/krew.yaml.tmpl is rendered with.
type templateData struct {
	Version   string
	Platforms []templatePlatform
}

type templatePlatform struct {
	OS, Arch, URI, SHA256, Bin string
	Files                      []string
}

// archiveName is the release archive of one platform.
func archiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", binaryName, version, goos, goarch, ext)
}

func binFor(goos string) string {
	if goos == "windows" {
		return binaryName + ".exe"
	}
	return binaryName
}

// manifestData reads the archives of version in dist for the wanted platforms.
func manifestData(version, dist, uriBase string, platforms []string) (templateData, error) {
	if !semverRE.MatchString(version) {
		return templateData{}, fmt.Errorf("version %q: krew wants a semantic version with a leading v, such as v0.1.0 (make ... VERSION=v0.1.0)", version)
	}
	if uriBase == "" {
		uriBase = releaseBase + version + "/"
	}
	if !strings.HasSuffix(uriBase, "/") {
		uriBase += "/"
	}
	d := templateData{Version: version}
	for _, p := range platforms {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok {
			return d, fmt.Errorf("platform %q: want os/arch", p)
		}
		name := archiveName(version, goos, goarch)
		file := filepath.Join(dist, name)
		sum, err := sha256File(file)
		if err != nil {
			return d, fmt.Errorf("%s: %w (run make dist VERSION=%s first)", p, err, version)
		}
		files, err := listArchive(file)
		if err != nil {
			return d, err
		}
		tp := templatePlatform{OS: goos, Arch: goarch, URI: uriBase + name, SHA256: sum, Bin: binFor(goos)}
		for f := range files {
			tp.Files = append(tp.Files, f)
		}
		sort.Slice(tp.Files, func(i, j int) bool { return fileOrder(tp.Files[i]) < fileOrder(tp.Files[j]) })
		d.Platforms = append(d.Platforms, tp)
	}
	return d, nil
}

// fileOrder lists the binary first, then the rest by name.
func fileOrder(name string) string {
	if strings.HasPrefix(name, binaryName) && !strings.Contains(name, "_") {
		return "0" + name
	}
	return "1" + name
}

func renderManifest(tmplPath string, d templateData) ([]byte, error) {
	t, err := template.New(filepath.Base(tmplPath)).Option("missingkey=error").ParseFiles(tmplPath)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dataFromManifest is the template data that a rendered manifest was made from (to re-render it in tests).
func dataFromManifest(p *Plugin) templateData {
	d := templateData{Version: p.Spec.Version}
	for _, pl := range p.Spec.Platforms {
		tp := templatePlatform{URI: pl.URI, SHA256: pl.Sha256, Bin: pl.Bin}
		if pl.Selector != nil {
			tp.OS, tp.Arch = pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		}
		for _, f := range pl.Files {
			tp.Files = append(tp.Files, f.From)
		}
		d.Platforms = append(d.Platforms, tp)
	}
	return d
}

var (
	// krew's semver.Parse: a leading v, then a semantic version (pre-release and build parts allowed).
	semverRE     = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	safeNameRE   = regexp.MustCompile(`^[\w-]+$`)
	sha256RE     = regexp.MustCompile(`^[a-f0-9]{64}$`)
	usageLineRE  = regexp.MustCompile(`^\s*(\$ |> |kubectl hami |# |Usage:|Examples?:)`)
	licenseNames = map[string]bool{"license": true, "license.txt": true, "license.md": true, "licenses": true,
		"licenses.txt": true, "licenses.md": true, "copying": true, "copying.txt": true}
	windowsForbidden = []string{"CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7",
		"COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}
)

const (
	maxShortDescription = 50
	maxDescriptionLine  = 80
)

type validateOptions struct {
	// Dist, when set, is the folder of the archives: each uri's archive must be there with the manifest's
	// sha256, and must hold bin and every files[].from.
	Dist string
	// Release: each uri is the GitHub release download of spec.version.
	Release bool
	// AllowLoopbackHTTP accepts http://127.0.0.1 uris (the release test serves the archives locally).
	AllowLoopbackHTTP bool
}

// validateManifest checks a manifest against krew's structural validation (internal/index/validation of
// sigs.k8s.io/krew), validate-krew-manifest's platform checks, and the krew-index review rules.
func validateManifest(text []byte, o validateOptions) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	var p Plugin
	if err := yaml.UnmarshalStrict(text, &p); err != nil {
		return []error{fmt.Errorf("not a krew manifest: %w", err)}
	}
	if p.APIVersion != apiVersion {
		bad("apiVersion is %q, want %q", p.APIVersion, apiVersion)
	}
	if p.Kind != "Plugin" {
		bad("kind is %q, want Plugin", p.Kind)
	}
	if p.Metadata.Name != pluginName {
		bad("metadata.name is %q, want %q", p.Metadata.Name, pluginName)
	}
	if !safeNameRE.MatchString(p.Metadata.Name) {
		bad("metadata.name %q must match %s", p.Metadata.Name, safeNameRE)
	}
	for _, f := range windowsForbidden {
		if strings.EqualFold(f, p.Metadata.Name) {
			bad("metadata.name %q is a reserved Windows file name", p.Metadata.Name)
		}
	}
	s := p.Spec
	if !semverRE.MatchString(s.Version) {
		bad("spec.version %q is not a semantic version with a leading v", s.Version)
	}
	if u, err := url.Parse(s.Homepage); err != nil || u.Scheme != "https" || u.Host == "" {
		bad("spec.homepage %q is not an https URL", s.Homepage)
	}
	switch {
	case s.ShortDescription == "":
		bad("spec.shortDescription is empty")
	case strings.ContainsAny(s.ShortDescription, "\r\n"):
		bad("spec.shortDescription has a line break")
	case len([]rune(s.ShortDescription)) > maxShortDescription:
		bad("spec.shortDescription has %d characters, at most %d", len([]rune(s.ShortDescription)), maxShortDescription)
	}
	if strings.TrimSpace(s.Description) == "" {
		bad("spec.description is empty")
	}
	for i, line := range strings.Split(strings.TrimRight(s.Description, "\n"), "\n") {
		if n := len([]rune(line)); n > maxDescriptionLine {
			bad("spec.description line %d has %d characters: wrap at %d", i+1, n, maxDescriptionLine)
		}
		if usageLineRE.MatchString(line) || strings.Contains(line, "```") {
			bad("spec.description line %d looks like a usage example (krew-index asks for none): %q", i+1, line)
		}
	}
	for i, line := range strings.Split(strings.TrimRight(s.Caveats, "\n"), "\n") {
		if n := len([]rune(line)); n > maxDescriptionLine {
			bad("spec.caveats line %d has %d characters: wrap at %d", i+1, n, maxDescriptionLine)
		}
	}
	if len(s.Platforms) == 0 {
		bad("spec.platforms is empty")
	}

	matches := map[string][]int{}
	for i, pl := range s.Platforms {
		where := fmt.Sprintf("spec.platforms[%d]", i)
		goos, goarch := "", ""
		switch {
		case pl.Selector == nil:
			bad("%s.selector is missing", where)
		case len(pl.Selector.MatchExpressions) > 0:
			bad("%s.selector uses matchExpressions: use matchLabels os and arch only", where)
		case len(pl.Selector.MatchLabels) == 0:
			bad("%s.selector.matchLabels is empty", where)
		default:
			for k := range pl.Selector.MatchLabels {
				if k != "os" && k != "arch" {
					bad("%s.selector.matchLabels has key %q: only os and arch are allowed", where, k)
				}
			}
			goos, goarch = pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
			if goos == "" || goarch == "" {
				bad("%s.selector.matchLabels needs both os and arch (one archive per platform)", where)
			}
			found := false
			for _, kp := range krewPlatforms {
				kos, karch, _ := strings.Cut(kp, "/")
				if (goos == "" || goos == kos) && (goarch == "" || goarch == karch) {
					matches[kp] = append(matches[kp], i)
					found = true
				}
			}
			if !found {
				bad("%s.selector (os=%s arch=%s) matches no platform krew supports", where, goos, goarch)
			}
		}
		if pl.Bin == "" {
			bad("%s.bin is empty", where)
		} else if goos == "windows" && !strings.HasSuffix(pl.Bin, ".exe") {
			bad("%s.bin %q: a Windows binary ends with .exe", where, pl.Bin)
		}
		if !sha256RE.MatchString(pl.Sha256) {
			bad("%s.sha256 %q is not 64 lowercase hex digits", where, pl.Sha256)
		}
		if len(pl.Files) == 0 {
			bad("%s.files is empty: list the binary and the LICENSE", where)
		}
		license, binShipped := false, false
		for j, f := range pl.Files {
			if f.From == "" || f.To == "" {
				bad("%s.files[%d] needs from and to", where, j)
			}
			if licenseNames[strings.ToLower(path.Base(f.From))] {
				license = true
			}
			if path.Base(f.From) == pl.Bin || f.From == "*" {
				binShipped = true
			}
		}
		if len(pl.Files) > 0 && !license {
			bad("%s.files has no LICENSE", where)
		}
		if len(pl.Files) > 0 && pl.Bin != "" && !binShipped {
			bad("%s.files does not copy bin %q", where, pl.Bin)
		}
		errs = append(errs, validateURI(where, pl, s.Version, goos, goarch, o)...)
	}
	for _, kp := range krewPlatforms {
		if idx := matches[kp]; len(idx) > 1 {
			bad("spec.platforms %v overlap: each selects %s", idx, kp)
		}
	}
	return errs
}

func validateURI(where string, pl Platform, version, goos, goarch string, o validateOptions) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	u, err := url.Parse(pl.URI)
	switch {
	case err != nil || u.Host == "":
		bad("%s.uri %q is not a URL", where, pl.URI)
		return errs
	case u.Scheme == "https":
	case u.Scheme == "http" && o.AllowLoopbackHTTP && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost"):
	default:
		bad("%s.uri %q: krew downloads over https", where, pl.URI)
	}
	name := path.Base(u.Path)
	if !strings.HasSuffix(name, ".tar.gz") && !strings.HasSuffix(name, ".zip") {
		bad("%s.uri %q: not a .tar.gz or .zip", where, pl.URI)
	}
	if goos != "" && goarch != "" && name != archiveName(version, goos, goarch) {
		bad("%s.uri names %s, want %s for %s/%s %s", where, name, archiveName(version, goos, goarch), goos, goarch, version)
	}
	if o.Release {
		if want := releaseBase + version + "/" + name; pl.URI != want {
			bad("%s.uri is %q, want the release download %q", where, pl.URI, want)
		}
	}
	if o.Dist == "" {
		return errs
	}
	file := filepath.Join(o.Dist, name)
	sum, err := sha256File(file)
	if err != nil {
		bad("%s: %v", where, err)
		return errs
	}
	if sum != pl.Sha256 {
		bad("%s.sha256 is %s but %s has %s", where, pl.Sha256, file, sum)
	}
	files, err := listArchive(file)
	if err != nil {
		bad("%s: %v", where, err)
		return errs
	}
	for _, f := range pl.Files {
		if f.From == "*" {
			continue
		}
		if _, ok := files[f.From]; !ok {
			bad("%s.files: %s is not in %s", where, f.From, name)
		}
	}
	if bf, ok := files[pl.Bin]; !ok {
		bad("%s.bin: %s is not in %s", where, pl.Bin, name)
	} else if goos != "windows" && bf.Mode&0o111 == 0 {
		bad("%s.bin: %s is not executable in %s", where, pl.Bin, name)
	}
	return errs
}

// readManifest parses a manifest file.
func readManifest(file string) (*Plugin, []byte, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var p Plugin
	if err := yaml.UnmarshalStrict(text, &p); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	return &p, text, nil
}
