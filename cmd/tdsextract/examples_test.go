package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/tdsextract/tdsextract/engine"
)

// The scheduler examples say what the code does: the Kubernetes Indexed
// Job runs shares with a run id and retries exactly the exit codes worth
// retrying, its job file is valid, and the systemd unit and the Airflow
// DAG agree with the exit codes.
func TestSchedulingExamples(t *testing.T) {
	f, err := os.Open("../../examples/scheduling/kubernetes-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	docs := map[string]map[string]any{}
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		docs[d["kind"].(string)] = d
	}
	get := func(v any, path ...any) any {
		t.Helper()
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m, ok := v.(map[string]any)
				if !ok {
					t.Fatalf("%v: not a map at %q", path, k)
				}
				v = m[k]
			case int:
				l, ok := v.([]any)
				if !ok || k >= len(l) {
					t.Fatalf("%v: no item %d", path, k)
				}
				v = l[k]
			}
		}
		return v
	}
	job, cm := docs["Job"], docs["ConfigMap"]
	if job == nil || cm == nil || job["apiVersion"] != "batch/v1" || cm["apiVersion"] != "v1" {
		t.Fatalf("want a batch/v1 Job and a v1 ConfigMap, got %v", docs)
	}
	if err := kubernetesSchema(job, &batchv1.Job{}); err != nil {
		t.Error(err)
	}
	if err := kubernetesSchema(cm, &corev1.ConfigMap{}); err != nil {
		t.Error(err)
	}
	spec := job["spec"]
	if get(spec, "completionMode") != "Indexed" || get(spec, "completions") != get(spec, "parallelism") {
		t.Errorf("Job spec: %v", spec)
	}
	if get(spec, "template", "spec", "restartPolicy") != "Never" {
		t.Error("restartPolicy must be Never for a pod failure policy")
	}
	c := get(spec, "template", "spec", "containers", 0)
	args := get(c, "args").([]any)
	n := get(spec, "completions").(int)
	if i := slices.Index(args, any("--unit")); i < 0 || args[i+1] != strconv.Itoa(n) {
		t.Errorf("args %v: want --unit %d (the index from JOB_COMPLETION_INDEX)", args, n)
	}
	var runID bool
	for _, e := range get(c, "env").([]any) {
		if get(e, "name") == "TDSEXTRACT_RUN_ID" && get(e, "valueFrom", "fieldRef", "fieldPath") != nil {
			runID = true
		}
	}
	if !runID {
		t.Error("the pods share no run id")
	}
	codes := map[string][]int{}
	for _, r := range get(spec, "podFailurePolicy", "rules").([]any) {
		for _, v := range get(r, "onExitCodes", "values").([]any) {
			codes[get(r, "action").(string)] = append(codes[get(r, "action").(string)], v.(int))
		}
	}
	slices.Sort(codes["Count"])
	slices.Sort(codes["FailIndex"])
	if !slices.Equal(codes["Count"], []int{exitConnect, exitTransient}) ||
		!slices.Equal(codes["FailIndex"], []int{exitInternal, exitConfig, exitExtract, exitIncomplete}) {
		t.Errorf("podFailurePolicy exit codes %v do not match the CLI's", codes)
	}
	// The job file in the ConfigMap is a valid job.
	dir := t.TempDir()
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(get(cm, "data", "job.yaml").(string)), 0o644); err != nil {
		t.Fatal(err)
	}
	jc, err := loadJob(path)
	if err != nil {
		t.Fatal(err)
	}
	// The pod gets the password from a Secret; resolving checks it is set.
	t.Setenv("TDSEXTRACT_PASSWORD", "from-the-secret")
	if _, err := engine.Resolve(jc, builtinSinks()); err != nil {
		t.Errorf("the ConfigMap's job: %v", err)
	}

	unit, err := os.ReadFile("../../examples/scheduling/tdsextract-export.service")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte(fmt.Sprintf("RestartPreventExitStatus=%d %d %d\n", exitInternal, exitConfig, exitExtract))) {
		t.Error("the systemd unit's RestartPreventExitStatus does not list the exit codes not worth retrying")
	}
	if py, err := exec.LookPath("python3"); err == nil {
		// Parsed only (no __pycache__ written, no Airflow needed).
		parse := "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])"
		if out, err := exec.Command(py, "-c", parse, "../../examples/scheduling/airflow_dag.py").CombinedOutput(); err != nil {
			t.Errorf("airflow_dag.py: %v\n%s", err, out)
		}
	} else {
		t.Log("python3 not installed: the Airflow DAG's syntax is not checked")
	}
}

// kubernetesSchema decodes doc strictly into the Kubernetes API type it
// declares (k8s.io/api, the Go types generated from the API's OpenAPI
// schema): an unknown or misspelt field, or a value of the wrong type,
// fails as it would fail `kubectl apply --validate=strict`, offline.
func kubernetesSchema(doc map[string]any, into any) error {
	b, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	if err := k8syaml.UnmarshalStrict(b, into); err != nil {
		return fmt.Errorf("%s: not a valid %T: %w", doc["kind"], into, err)
	}
	return nil
}

// TestKubernetesSchemaRefuses keeps the schema check able to fail: a
// misspelt field and a string where the API wants an integer.
func TestKubernetesSchemaRefuses(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec: {completionMod: Indexed}\n",
		"apiVersion: batch/v1\nkind: Job\nspec: {completions: four}\n",
	} {
		var d map[string]any
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		if err := kubernetesSchema(d, &batchv1.Job{}); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}
