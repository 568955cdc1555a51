package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The parts of deploy/kubernetes's manifests this test reads. They are
// decoded strictly: a field the types below do not name (a misspelt
// "completionmode", a field of another API version) fails the test, as
// kubectl's field validation would fail the apply.
type (
	k8sMeta struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	}
	k8sJob struct {
		APIVersion string  `json:"apiVersion"`
		Kind       string  `json:"kind"`
		Metadata   k8sMeta `json:"metadata"`
		Spec       struct {
			CompletionMode   string `json:"completionMode"`
			Completions      *int   `json:"completions"`
			Parallelism      *int   `json:"parallelism"`
			BackoffLimit     *int   `json:"backoffLimit"`
			PodFailurePolicy *struct {
				Rules []struct {
					Action      string `json:"action"`
					OnExitCodes *struct {
						ContainerName string `json:"containerName"`
						Operator      string `json:"operator"`
						Values        []int  `json:"values"`
					} `json:"onExitCodes"`
					OnPodConditions []struct {
						Type string `json:"type"`
					} `json:"onPodConditions"`
				} `json:"rules"`
			} `json:"podFailurePolicy"`
			Template struct {
				Spec struct {
					RestartPolicy string         `json:"restartPolicy"`
					Containers    []k8sContainer `json:"containers"`
					Volumes       []struct {
						Name                  string `json:"name"`
						PersistentVolumeClaim struct {
							ClaimName string `json:"claimName"`
						} `json:"persistentVolumeClaim"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	k8sContainer struct {
		Name            string   `json:"name"`
		Image           string   `json:"image"`
		ImagePullPolicy string   `json:"imagePullPolicy"`
		Command         []string `json:"command"`
		Env             []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
		Resources struct {
			Requests map[string]string `json:"requests"`
			Limits   map[string]string `json:"limits"`
		} `json:"resources"`
		VolumeMounts []struct {
			Name      string `json:"name"`
			MountPath string `json:"mountPath"`
		} `json:"volumeMounts"`
	}
	k8sPVC struct {
		APIVersion string  `json:"apiVersion"`
		Kind       string  `json:"kind"`
		Metadata   k8sMeta `json:"metadata"`
		Spec       struct {
			AccessModes []string `json:"accessModes"`
			Resources   struct {
				Requests map[string]string `json:"requests"`
			} `json:"resources"`
		} `json:"spec"`
	}
)

func readManifest(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// env is the value of a container's environment variable name.
func (c *k8sContainer) env(name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// container is the Job's one container, run as /bin/sh -c SCRIPT, with its
// results volume mounted where $RESULTS says, from the claim it returns.
func (j *k8sJob) container(t *testing.T, file string) (c *k8sContainer, script, claim string) {
	t.Helper()
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Fatalf("%s: %s %s, want a batch/v1 Job", file, j.APIVersion, j.Kind)
	}
	pod := &j.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", file, len(pod.Containers))
	}
	c = &pod.Containers[0]
	if len(c.Command) != 3 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" {
		t.Fatalf("%s: command %q, want /bin/sh -c SCRIPT", file, c.Command)
	}
	if pod.RestartPolicy != "Never" {
		t.Errorf("%s: restartPolicy %q: a Job's pod that failed must not restart in place (and podFailurePolicy needs Never)", file, pod.RestartPolicy)
	}
	results, ok := c.env("RESULTS")
	if !ok || !strings.Contains(c.Command[2], `"$RESULTS"`) {
		t.Errorf("%s: the command does not write to \"$RESULTS\", or the container does not set RESULTS", file)
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath != results {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	if claim == "" {
		t.Errorf("%s: no persistent volume claim is mounted at RESULTS=%s", file, results)
	}
	return c, c.Command[2], claim
}

// seedfallFlags are the flags of `seedfall <cmd>` in a shell script.
func seedfallFlags(t *testing.T, file, script, cmd string) []string {
	t.Helper()
	f := strings.Fields(script)
	for i := 0; i+1 < len(f); i++ {
		if f[i] != "seedfall" || f[i+1] != cmd {
			continue
		}
		var flags []string
		for _, a := range f[i+2:] {
			if strings.HasSuffix(a, ";") || a == "||" || a == "&&" {
				break
			}
			if strings.HasPrefix(a, "-") {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				flags = append(flags, name)
			}
		}
		return flags
	}
	t.Fatalf("%s: the command runs no `seedfall %s`: %s", file, cmd, script)
	return nil
}

// TestKubernetesIndexedJob checks deploy/kubernetes as far as it can be
// without a cluster: the Indexed Job's count of shards is its completions,
// the flags its pods and the merge Job pass exist, the image's Go is the
// one go.mod names, and the pods' command, run here three times with the
// index Kubernetes would give each pod, then the merge Job's, prints what
// one unsharded `seedfall run` prints and gives every seed its digest.
func TestKubernetesIndexedJob(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a sweep of kvlog as three pods and a merge")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "deploy", "kubernetes")
	var sweep, merge k8sJob
	var pvc k8sPVC
	readManifest(t, filepath.Join(dir, "sweep-job.json"), &sweep)
	readManifest(t, filepath.Join(dir, "merge-job.json"), &merge)
	readManifest(t, filepath.Join(dir, "results-pvc.json"), &pvc)

	// The sweep: one pod per shard, the count of shards its completions.
	c, sweepScript, claim := sweep.container(t, "sweep-job.json")
	spec := sweep.Spec
	if spec.CompletionMode != "Indexed" {
		t.Errorf("sweep-job.json: completionMode %q, want Indexed (pods get JOB_COMPLETION_INDEX)", spec.CompletionMode)
	}
	if spec.Completions == nil || *spec.Completions < 1 {
		t.Fatalf("sweep-job.json: completions must be 1 or more: the number of shards")
	}
	n := *spec.Completions
	if count, _ := c.env("SEEDFALL_SHARD_COUNT"); count != strconv.Itoa(n) {
		t.Errorf("sweep-job.json: SEEDFALL_SHARD_COUNT is %q, completions %d: they must be equal, or seeds are lost or run twice", count, n)
	}
	if p := spec.Parallelism; p == nil || *p < 1 || *p > n {
		t.Errorf("sweep-job.json: parallelism %v, want 1 to completions (%d)", p, n)
	}
	if spec.PodFailurePolicy != nil {
		for _, r := range spec.PodFailurePolicy.Rules {
			if r.OnExitCodes != nil && r.OnExitCodes.ContainerName != c.Name {
				t.Errorf("sweep-job.json: podFailurePolicy names container %q, the pod's is %q", r.OnExitCodes.ContainerName, c.Name)
			}
		}
	}
	if _, ok := c.env("SEEDS"); !ok {
		t.Errorf("sweep-job.json: the container sets no SEEDS")
	}

	// The merge reads the claim the sweep wrote, from the same image.
	mc, mergeScript, mergeClaim := merge.container(t, "merge-job.json")
	if mergeClaim != claim || claim != pvc.Metadata.Name {
		t.Errorf("the sweep mounts claim %q, the merge %q, results-pvc.json makes %q: all three must be one", claim, mergeClaim, pvc.Metadata.Name)
	}
	if mc.Image != c.Image {
		t.Errorf("merge-job.json runs image %q, the sweep %q: merge refuses shards of another build", mc.Image, c.Image)
	}
	if b := merge.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("merge-job.json: backoffLimit must be 0: merge exits 1 when a seed failed, and a retry would only print it again")
	}
	if pvc.Kind != "PersistentVolumeClaim" || !strings.Contains(strings.Join(pvc.Spec.AccessModes, " "), "ReadWriteMany") {
		t.Errorf("results-pvc.json: a %s with access modes %v: pods on several nodes write it, so ReadWriteMany", pvc.Kind, pvc.Spec.AccessModes)
	}

	// The image: the Go of go.mod, and a default world that exists.
	dockerfile, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	goArg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(dockerfile)
	if goLine == nil || goArg == nil || string(goArg[1]) != string(goLine[1]) {
		t.Errorf("Dockerfile: ARG GO_VERSION=%s, go.mod: go %s: the image must build with go.mod's Go", goArg, goLine)
	}
	worldArg := regexp.MustCompile(`(?m)^ARG WORLD=(\S+)$`).FindSubmatch(dockerfile)
	if worldArg == nil {
		t.Fatal("Dockerfile: no ARG WORLD=path of the default world")
	}

	// Every flag the pods pass is one seedfall has.
	bin, err := docBinary()
	if err != nil {
		t.Fatal(err)
	}
	env := docEnv(t, bin)
	for _, s := range []struct{ file, script, cmd string }{{"sweep-job.json", sweepScript, "run"}, {"merge-job.json", mergeScript, "merge"}} {
		help, _ := exec.Command(filepath.Join(bin, "seedfall"), s.cmd, "-h").CombinedOutput()
		for _, f := range seedfallFlags(t, s.file, s.script, s.cmd) {
			if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(f) + `\b`).Match(help) {
				t.Errorf("%s: seedfall %s has no flag -%s (seedfall %s -h):\n%s", s.file, s.cmd, f, s.cmd, help)
			}
		}
	}
	if t.Failed() {
		return
	}

	// The pods, one after the other, in a copy of the examples as the
	// image has them; then the merge Job, then one unsharded run.
	work := t.TempDir()
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	if err := copyTree(filepath.Join(root, "examples"), filepath.Join(work, "world")); err != nil {
		t.Fatal(err)
	}
	world := filepath.Join(work, "world", filepath.FromSlash(string(worldArg[1])))
	results := filepath.Join(work, "results")
	const seeds = "1-30" // the manifest's sweep would take minutes here
	podEnv := append(env[:len(env):len(env)], "WORLD="+world, "SEEDS="+seeds, "RESULTS="+results)
	for _, e := range c.Env {
		if e.Name != "SEEDS" && e.Name != "RESULTS" {
			podEnv = append(podEnv, e.Name+"="+e.Value)
		}
	}
	// sh runs script as a container would, and returns its stdout, its
	// stdout and stderr together (for messages), and its exit status.
	sh := func(script string, env []string) (stdout, all string, code int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
		cmd.Dir, cmd.Env = filepath.Dir(world), env
		var out, both bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &both), &both
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("sh -c %s: %v\n%s", script, err, both.Bytes())
		}
		return out.String(), both.String(), cmd.ProcessState.ExitCode()
	}
	for i := range n {
		_, out, code := sh(sweepScript, append(podEnv, "JOB_COMPLETION_INDEX="+strconv.Itoa(i)))
		if code != 0 {
			t.Fatalf("pod %d of %d (JOB_COMPLETION_INDEX=%d) exited %d, want 0 (it ran its shard):\n%s", i+1, n, i, code, out)
		}
		if _, err := os.Stat(filepath.Join(results, "shard-"+strconv.Itoa(i+1)+"-of-"+strconv.Itoa(n))); err != nil {
			t.Fatalf("pod %d of %d wrote no shard directory: %v\n%s", i+1, n, err, out)
		}
	}
	// The merge Job's stdout is the summary; its stderr names the files
	// it wrote (-junit, -report), which the unsharded run was not asked for.
	merged, mergeAll, mergeCode := sh(mergeScript, append(env[:len(env):len(env)], "RESULTS="+results))
	whole, wholeAll, wholeCode := sh(`exec seedfall run -c "$WORLD" -seeds "$SEEDS" -parallel 1`, podEnv)
	if mergeCode != wholeCode {
		t.Errorf("the merge Job exited %d, one unsharded run %d:\n%s\n%s", mergeCode, wholeCode, mergeAll, wholeAll)
	}
	if d := lineDiff(normLines(whole), normLines(merged)); d != "" {
		t.Errorf("the merge Job's output differs from one unsharded run's, wall times aside (- run, + merge):\n%s", d)
	}
	mergedJSON, _, _ := sh(`exec seedfall merge -json "$RESULTS"`, podEnv)
	wholeJSON, _, _ := sh(`exec seedfall run -c "$WORLD" -seeds "$SEEDS" -parallel 1 -json`, podEnv)
	if d := lineDiff(normLines(wholeJSON), normLines(mergedJSON)); d != "" {
		t.Errorf("seedfall merge -json differs from seedfall run -json (- run, + merge):\n%s", d)
	}
	if d := strings.Count(wholeJSON, `"digest":"`); d != 30 {
		t.Errorf("seedfall run -json printed %d digests, want 30:\n%s", d, wholeJSON)
	}

	// The JUnit file and the report the merge Job leaves next to the shards.
	cases, err := junitCases(filepath.Join(results, "junit.xml"))
	if err != nil || cases != 30 {
		t.Errorf("junit.xml: %d test cases, want one per seed (30); %v", cases, err)
	}
	if fi, err := os.Stat(filepath.Join(results, "report.html")); err != nil || fi.Size() == 0 {
		t.Errorf("the merge Job wrote no report.html: %v", err)
	}
}

// junitCases counts the testcase elements of a JUnit file, whether its
// root is <testsuites> or one <testsuite>.
func junitCases(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "testcase" {
			n++
		}
	}
}

// lineDiff shows where two outputs part: "" when they are the same, else
// the lines of each from the first that differs (a few of them).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	if i == len(al) && i == len(bl) {
		return ""
	}
	var d strings.Builder
	fmt.Fprintf(&d, "from line %d:\n", i+1)
	for _, side := range []struct {
		sign  string
		lines []string
	}{{"-", al}, {"+", bl}} {
		for _, l := range side.lines[i:min(i+6, len(side.lines))] {
			fmt.Fprintf(&d, "%s %s\n", side.sign, l)
		}
		if len(side.lines) > i+6 {
			fmt.Fprintf(&d, "%s ... (%d lines in all)\n", side.sign, len(side.lines))
		}
	}
	return d.String()
}

// normLines is output with wall times replaced, as the transcripts compare.
func normLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = normLine(l)
	}
	return strings.Join(lines, "\n")
}
