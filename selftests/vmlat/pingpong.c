// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: a context-switch-heavy host workload with no VM in it.
 *
 *   pingpong SECONDS [CPU]
 *
 * Two processes bounce a byte through two pipes, both pinned to CPU (by
 * default 0), so every round trip is two context switches. Prints the
 * round trips per second. vmlat's benchmark compares this rate with and
 * without vmlat: the sched_switch probe must cost next to nothing for
 * tasks that are not vCPUs.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

int main(int argc, char **argv)
{
	int ping[2], pong[2], cpu = argc > 2 ? atoi(argv[2]) : 0;
	double secs = argc > 1 ? atof(argv[1]) : 1, t0;
	unsigned long n = 0;
	char c = 0;
	pid_t child;

	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		return 1;
	}
	pin(cpu);
	child = fork();
	if (child == 0) {
		while (read(ping[0], &c, 1) == 1 && write(pong[1], &c, 1) == 1)
			;
		_exit(0);
	}
	t0 = now_s();
	while (now_s() - t0 < secs) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
		n++;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("pingpong: %lu round trips in %.2f s (%.0f/s)\n", n, now_s() - t0,
	       n / (now_s() - t0));
	return 0;
}
