package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v2"
)

// renderDeviceConfig renders the device-config.yaml of the chart's device ConfigMap
// (charts/hami/templates/scheduler/device-configmap.yaml) with the chart's default values: the template's
// last branch (no device-config content given, no files/device-config.yaml), each {{ .Values.x.y | default d }}
// replaced by values.yaml's value or the default. Helm is not needed for this one template.
func renderDeviceConfig(hamiDir string) (string, error) {
	chart := filepath.Join(hamiDir, "charts", "hami")
	tmpl, err := os.ReadFile(filepath.Join(chart, "templates", "scheduler", "device-configmap.yaml"))
	if err != nil {
		return "", err
	}
	vb, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return "", err
	}
	var values map[any]any
	if err := yaml.Unmarshal(vb, &values); err != nil {
		return "", err
	}
	lines := strings.Split(string(tmpl), "\n")
	start, end := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "{{- else }}" {
			start = i + 1
		}
		if t == "{{ end }}" && start >= 0 {
			end = i
		}
	}
	if start < 0 || end < 0 {
		return "", fmt.Errorf("device-configmap.yaml: no else branch found")
	}
	expr := regexp.MustCompile(`\{\{\s*\.Values\.([A-Za-z0-9_.]+)\s*(\|\s*default\s+("?[^"}]*"?))?\s*\}\}`)
	var out []string
	var missing []string
	for _, l := range lines[start:end] {
		l = expr.ReplaceAllStringFunc(l, func(m string) string {
			sub := expr.FindStringSubmatch(m)
			v, ok := lookup(values, strings.Split(sub[1], "."))
			if ok && v != nil && fmt.Sprint(v) != "" && fmt.Sprint(v) != "false" {
				return fmt.Sprint(v)
			}
			if sub[3] != "" {
				return strings.Trim(sub[3], `"`)
			}
			if ok && v != nil {
				return fmt.Sprint(v)
			}
			missing = append(missing, sub[1])
			return ""
		})
		if strings.Contains(l, "{{") {
			return "", fmt.Errorf("device-configmap.yaml: unrendered template: %s", l)
		}
		out = append(out, strings.TrimPrefix(l, "    "))
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("device-configmap.yaml: values not found: %v", missing)
	}
	return strings.Join(out, "\n") + "\n", nil
}

func lookup(m map[any]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[any]any)
		if !ok {
			return nil, false
		}
		cur, ok = mm[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}
