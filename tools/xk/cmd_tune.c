// SPDX-License-Identifier: GPL-2.0
/*
 * xk tune: a constant swept over values. For each value: the value set as
 * xk set sets it (xk_rt_set, the same transition), the workload run through
 * /bin/sh -c, the metric command run with the workload's standard output on
 * its standard input, its output read as a number; repeated; then the
 * original value restored (also after a failure, SIGINT, SIGTERM or
 * SIGHUP), or the constant unloaded when it was not loaded before. Prints a
 * table of mean, standard deviation, min, max and n per value, writes it as
 * CSV and draws it with gnuplot when asked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"

#define TUNE_VALUES_MAX 64

static const char *const modes[] = { "immediate", "global", "per-task", NULL };

struct tune_args {
	const char *values, *run, *metric, *csv, *plot, *catalog, *label;
	bool log_y;
	int repeat;
	int mode;
	int timeout_ms;
	bool partial;
};

struct tune {
	const struct tune_args *a;
	const char *name;
	long long values[TUNE_VALUES_MAX];
	int nr_values;
	double *samples;		/* [value][repeat] */
	long long original;
	bool loaded_here;		/* unloaded at the end */
	bool changed;			/* a value of ours may be in force */
	int out_fd;			/* the workload's standard output */
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t running_child;

static void on_signal(int sig)
{
	stop_signal = sig;
	if (running_child > 0)
		kill(running_child, SIGTERM);
}

static void handle_signals(bool on)
{
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on ? on_signal : SIG_DFL };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static int parse_values(struct tune *t, const char *list)
{
	const char *s = list;

	while (*s) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(s, &end, 0);
		if (errno || end == s || (*end && *end != ','))
			return p_usage("tune", "--values is a list of numbers "
				       "like 4,8,16, not '%s'", list);
		if (t->nr_values == TUNE_VALUES_MAX)
			return p_usage("tune", "at most %d --values",
				       TUNE_VALUES_MAX);
		t->values[t->nr_values++] = v;
		s = *end ? end + 1 : end;
	}
	if (!t->nr_values)
		return p_usage("tune", "--values names no value");
	return 0;
}

/* sh -c cmd with stdin and stdout as given: its exit status */
static int run_shell(const char *cmd, int in_fd, int out_fd)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	pid_t pid;
	int st = cli_spawn(argv, in_fd, out_fd, -1, &pid);

	if (st)
		return st;
	running_child = pid;
	if (stop_signal)	/* it came before the child was known */
		kill(pid, SIGTERM);
	st = cli_wait(pid);
	running_child = 0;
	return st;
}

/* The metric of the workload's output (in t->out_fd): 0 and *v, or fails. */
static int measure(struct tune *t, long long value, int run, double *v)
{
	char out[4096], *line, *end;
	int pipefd[2], st;
	ssize_t n, len = 0;
	pid_t pid;
	const char *argv[] = { "/bin/sh", "-c", t->a->metric, NULL };

	if (lseek(t->out_fd, 0, SEEK_SET) < 0 || pipe2(pipefd, O_CLOEXEC))
		return -errno;
	st = cli_spawn(argv, t->out_fd, pipefd[1], -1, &pid);
	close(pipefd[1]);
	if (st) {
		close(pipefd[0]);
		p_err("cannot run /bin/sh: %s", strerror(-st));
		return st;
	}
	running_child = pid;
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += n;
		if (len == sizeof(out) - 1) {	/* keep the last half */
			memmove(out, out + len / 2, len - len / 2);
			len -= len / 2;
		}
	}
	out[len] = '\0';
	close(pipefd[0]);
	st = cli_wait(pid);
	running_child = 0;
	if (stop_signal)
		return -EINTR;
	if (st) {
		p_err("--metric '%s' failed (exit status %d) at %s=%lld, run %d",
		      t->a->metric, st, t->name, value, run);
		return -EIO;
	}
	/* its last line that is not blank */
	while (len && (out[len - 1] == '\n' || out[len - 1] == ' ' ||
		       out[len - 1] == '\t' || out[len - 1] == '\r'))
		out[--len] = '\0';
	line = strrchr(out, '\n');
	line = line ? line + 1 : out;
	while (*line == ' ' || *line == '\t')
		line++;
	errno = 0;
	*v = strtod(line, &end);
	if (errno || end == line || *end || !isfinite(*v)) {
		p_err("--metric '%s' printed '%s' at %s=%lld, run %d: not a number",
		      t->a->metric, line, t->name, value, run);
		return -EINVAL;
	}
	return 0;
}

static int set_value(struct tune *t, long long value, int mode)
{
	struct xk_rt_result r;
	int fd = open_runtime(), err;

	if (fd < 0)
		return fd;
	err = xk_rt_set(fd, t->name, value, mode, t->a->timeout_ms, &r);
	close(fd);
	if (err)
		return p_lib_err("tune", err), err;
	return 0;
}

/* The original value again, or the constant unloaded if we loaded it. */
static int restore(struct tune *t)
{
	int fd, err, n;

	if (t->loaded_here) {
		fd = xk_rt_open();
		err = fd < 0 ? fd : xk_rt_unload(fd, t->name, &n);
		if (fd >= 0)
			close(fd);
		if (err)
			return p_lib_err("tune: unloading", err), err;
	} else if (t->changed) {
		err = set_value(t, t->original, t->a->mode);
		/* a global transition that timed out: at once, then */
		if (err && t->a->mode)
			err = set_value(t, t->original, 0);
		if (err)
			return err;
	}
	if (!quiet)
		fprintf(stderr, "xk: %s %s\n", t->loaded_here ? "unloaded" : "restored",
			t->name);
	return 0;
}

static int sweep(struct tune *t)
{
	const struct tune_args *a = t->a;
	char env[32];

	for (int i = 0; i < t->nr_values; i++) {
		int err;

		if (stop_signal)
			return -EINTR;
		t->changed = true;
		err = set_value(t, t->values[i], a->mode);
		if (err)
			return err;
		snprintf(env, sizeof(env), "%lld", t->values[i]);
		setenv("XK_TUNE_VALUE", env, 1);
		for (int k = 0; k < a->repeat; k++) {
			double *v = &t->samples[i * a->repeat + k];
			int st;

			snprintf(env, sizeof(env), "%d", k + 1);
			setenv("XK_TUNE_RUN", env, 1);
			if (ftruncate(t->out_fd, 0) || lseek(t->out_fd, 0, SEEK_SET))
				return -errno;
			st = run_shell(a->run, -1, t->out_fd);
			if (stop_signal)
				return -EINTR;
			if (st) {
				p_err("--run '%s' failed (exit status %d) at %s=%lld, "
				      "run %d of %d", a->run, st, t->name,
				      t->values[i], k + 1, a->repeat);
				return -EIO;
			}
			err = measure(t, t->values[i], k + 1, v);
			if (err)
				return err;
			if (!quiet)
				fprintf(stderr, "xk: %s=%lld: %g (run %d of %d)\n",
					t->name, t->values[i], *v, k + 1, a->repeat);
		}
	}
	return 0;
}

/* Newton's square root: xk links without libm */
static double square_root(double x)
{
	double r = x > 1 ? x : 1;

	if (x <= 0)
		return 0;
	for (int i = 0; i < 200; i++)
		r = (r + x / r) / 2;
	return r;
}

struct stats {
	double mean, stdev, min, max;
};

static struct stats stats_of(const double *v, int n)
{
	struct stats s = { 0, 0, v[0], v[0] };
	double ss = 0;

	for (int i = 0; i < n; i++) {
		s.mean += v[i] / n;
		s.min = v[i] < s.min ? v[i] : s.min;
		s.max = v[i] > s.max ? v[i] : s.max;
	}
	for (int i = 0; i < n; i++)
		ss += (v[i] - s.mean) * (v[i] - s.mean);
	s.stdev = n > 1 ? square_root(ss / (n - 1)) : 0;	/* sample deviation */
	return s;
}

static int write_csv(const struct tune *t, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		p_err("--csv %s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "value,mean,stdev,min,max,n\n");
	for (int i = 0; i < t->nr_values; i++) {
		struct stats s = stats_of(&t->samples[i * t->a->repeat], t->a->repeat);

		fprintf(f, "%lld,%.10g,%.10g,%.10g,%.10g,%d\n", t->values[i], s.mean,
			s.stdev, s.min, s.max, t->a->repeat);
	}
	if (fclose(f)) {
		p_err("--csv %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* text for a gnuplot string in single quotes ('' is a quote) */
static void gp_str(FILE *f, const char *s, size_t max)
{
	fputc('\'', f);
	for (size_t i = 0; s[i] && i < max; i++) {
		if (s[i] == '\'')
			fputc('\'', f);
		fputc(s[i], f);
	}
	fputs(strlen(s) > max ? "...'" : "'", f);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* gnuplot draws mean +- stdev per value, the script on its stdin */
static int plot(const struct tune *t, const char *path)
{
	const char *argv[] = { "gnuplot", NULL };
	bool svg = ends_with(path, ".svg");
	long long lo = t->values[0], hi = t->values[0];
	int pipefd[2], st;
	pid_t pid;
	FILE *f;

	if (!svg && !ends_with(path, ".png")) {
		p_err("--plot %s: name a .png or .svg file", path);
		return -EINVAL;
	}
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	st = cli_spawn(argv, pipefd[0], -1, -1, &pid);
	close(pipefd[0]);
	if (st) {
		close(pipefd[1]);
		p_err("--plot: cannot run gnuplot (%s): apt-get install "
		      "gnuplot-nox", strerror(-st));
		return st;
	}
	f = fdopen(pipefd[1], "w");
	if (!f) {
		close(pipefd[1]);
		cli_wait(pid);
		return -ENOMEM;
	}
	for (int i = 0; i < t->nr_values; i++) {
		lo = t->values[i] < lo ? t->values[i] : lo;
		hi = t->values[i] > hi ? t->values[i] : hi;
	}
	fprintf(f, "set terminal %s size 800,500 noenhanced%s\n",
		svg ? "svg" : "pngcairo", svg ? " dynamic" : "");
	fputs("set output ", f);
	gp_str(f, path, 4096);
	fputs("\nset title ", f);
	fprintf(f, "'xk tune %s (mean and standard deviation of %d run%s per "
		"value)'\n", t->name, t->a->repeat, t->a->repeat == 1 ? "" : "s");
	fputs("set xlabel ", f);
	gp_str(f, t->name, 64);
	fputs("\nset ylabel ", f);
	gp_str(f, t->a->label ?: t->a->metric, 60);
	fputs("\nset grid\nset key off\nset offsets graph 0.03, graph 0.03\n", f);
	if (lo > 0 && hi >= 16 * lo)
		fputs("set logscale x 2\n", f);
	if (t->a->log_y)
		fputs("set logscale y\n", f);
	fputs("$data << EOD\n", f);
	for (int i = 0; i < t->nr_values; i++) {
		struct stats s = stats_of(&t->samples[i * t->a->repeat], t->a->repeat);

		fprintf(f, "%lld %.10g %.10g\n", t->values[i], s.mean, s.stdev);
	}
	fputs("EOD\nplot $data using 1:2:3 with yerrorlines lw 2 pt 7\n", f);
	fclose(f);
	st = cli_wait(pid);
	if (st) {
		p_err("--plot %s: gnuplot failed (exit status %d)", path, st);
		return -EIO;
	}
	return 0;
}

static void print_results(const struct tune *t)
{
	int n = t->a->repeat;

	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "constant", t->name);
		json_int(jw, "original", t->original);
		json_bool(jw, "was_loaded", !t->loaded_here);
		json_str(jw, "mode", modes[t->a->mode]);
		json_int(jw, "repeat", n);
		json_begin_array(jw, "results");
		for (int i = 0; i < t->nr_values; i++) {
			struct stats s = stats_of(&t->samples[i * n], n);

			json_begin_object(jw, NULL);
			json_int(jw, "value", t->values[i]);
			json_double(jw, "mean", s.mean);
			json_double(jw, "stdev", s.stdev);
			json_double(jw, "min", s.min);
			json_double(jw, "max", s.max);
			json_int(jw, "n", n);
			json_begin_array(jw, "samples");
			for (int k = 0; k < n; k++)
				json_double(jw, NULL, t->samples[i * n + k]);
			json_end_array(jw);
			json_end_object(jw);
		}
		json_end_array(jw);
		json_str(jw, "csv", t->a->csv);
		json_str(jw, "plot", t->a->plot);
		json_end_object(jw);
		return;
	}
	printf("%-12s %14s %14s %14s %14s %4s\n", "value", "mean", "stdev",
	       "min", "max", "n");
	for (int i = 0; i < t->nr_values; i++) {
		struct stats s = stats_of(&t->samples[i * n], n);

		printf("%-12lld %14.6g %14.6g %14.6g %14.6g %4d\n", t->values[i],
		       s.mean, s.stdev, s.min, s.max, n);
	}
	printf("%s: %s %lld\n", t->name, t->loaded_here ? "unloaded, compiled-in"
							: "restored to", t->original);
}

static int do_tune(void *args, int argc, char **argv)
{
	const struct tune_args *a = args;
	struct tune t = { .a = a, .out_fd = -1 };
	struct xk_ioc_status *st;
	int err, rerr;

	if (argc != 1)
		return p_usage("tune", "name one constant");
	if (!a->values || !a->run || !a->metric)
		return p_usage("tune", "give --values, --run and --metric");
	if (parse_values(&t, a->values))
		return XK_EXIT_USAGE;
	if (a->plot && !ends_with(a->plot, ".png") && !ends_with(a->plot, ".svg"))
		return p_usage("tune", "--plot names a .png or .svg file");
	t.name = argv[0];
	t.samples = calloc(t.nr_values * a->repeat, sizeof(*t.samples));
	st = calloc(1, sizeof(*st));
	t.out_fd = memfd_create("xk-tune-output", MFD_CLOEXEC);
	if (!t.samples || !st || t.out_fd < 0) {
		p_err("tune: %s", strerror(t.out_fd < 0 ? errno : ENOMEM));
		err = -ENOMEM;
		goto out;
	}
	stop_signal = 0;
	handle_signals(true);
	if (!is_loaded(t.name, st)) {
		struct load_args la = { .catalog = a->catalog,
					.timeout_ms = a->timeout_ms,
					.partial = a->partial, .silent = true };

		err = load_table(t.name, &la) ? -EIO : 0;
		if (!err)
			t.loaded_here = true;
		if (!err && !is_loaded(t.name, st))
			err = -ENOENT;
		if (err)
			goto out;
	}
	if (st->policy[0]) {
		p_err("tune: %s's values are chosen by policy %s (xk unload %s "
		      "first)", t.name, st->policy, t.name);
		err = -EBUSY;
		goto out;
	}
	t.original = st->value;
	err = sweep(&t);
out:
	rerr = t.loaded_here || t.changed ? restore(&t) : 0;
	handle_signals(false);
	if (stop_signal) {
		p_err("tune: stopped by signal %d; %s %s", (int)stop_signal,
		      t.name, rerr ? "NOT restored" : "restored");
		err = 128 + stop_signal;
	} else if (!err && !rerr) {
		if (a->csv)
			err = write_csv(&t, a->csv);
		if (!err && a->plot)
			err = plot(&t, a->plot);
		if (!err)
			print_results(&t);
	}
	if (t.out_fd >= 0)
		close(t.out_fd);
	free(t.samples);
	free(st);
	if (err > 0)
		return err;
	return err || rerr ? XK_EXIT_FAIL : 0;
}

static struct tune_args tune_args = { .repeat = 3, .timeout_ms = 1000 };
static const struct cli_opt tune_opts[] = {
	{ "values", 0, CLI_STR, offsetof(struct tune_args, values) },
	{ "run", 0, CLI_STR, offsetof(struct tune_args, run) },
	{ "metric", 0, CLI_STR, offsetof(struct tune_args, metric) },
	{ "repeat", 'n', CLI_INT, offsetof(struct tune_args, repeat), 1, 1000,
	  .range = "1 to 1000" },
	CLI_MODE_TIMEOUT_OPTS(struct tune_args, modes),
	{ "csv", 0, CLI_STR, offsetof(struct tune_args, csv) },
	{ "plot", 0, CLI_STR, offsetof(struct tune_args, plot) },
	{ "label", 0, CLI_STR, offsetof(struct tune_args, label) },
	{ "log-y", 0, CLI_FLAG, offsetof(struct tune_args, log_y) },
	{ "catalog", 'c', CLI_STR, offsetof(struct tune_args, catalog) },
	{ "partial", 0, CLI_FLAG, offsetof(struct tune_args, partial) },
	{ NULL },
};

const struct cli_cmd cmd_tune = { "tune", do_tune, tune_opts, &tune_args, -1 };
