/*
 * lockbench-init: PID 1 of lockbench's local Redis image (cluster.BuildImage).
 *
 * It runs its arguments (redis-server ...) as a child and keeps the container
 * alive when that child dies, so the docker backend can kill and restart the
 * server in milliseconds without stopping the container (a container start
 * takes seconds, far longer than a lock's TTL):
 *
 *   SIGUSR2  SIGKILL the child and reap it (Node.Kill)
 *   SIGUSR1  start the child again if it is not running (Node.Restart)
 *   SIGTERM, SIGINT  SIGKILL the child and exit
 *
 * The host sends these with `docker kill --signal`. Other children that
 * exit are reaped (PID 1's duty). Signals are taken synchronously with
 * sigwaitinfo, so no handler races with fork.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void start(char **argv, const sigset_t *old) {
	pid_t p = fork();
	if (p < 0) {
		perror("lockbench-init: fork");
		return;
	}
	if (p == 0) {
		sigprocmask(SIG_SETMASK, old, NULL);
		execvp(argv[0], argv);
		perror("lockbench-init: exec");
		_exit(127);
	}
	child = p;
}

static void reap(void) {
	pid_t p;
	while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
		if (p == child)
			child = 0;
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: lockbench-init COMMAND [ARG...]\n");
		return 2;
	}
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	start(argv + 1, &old);
	for (;;) {
		int sig = sigwaitinfo(&set, NULL);
		switch (sig) {
		case SIGCHLD:
			reap();
			break;
		case SIGUSR2:
			if (child > 0) {
				kill(child, SIGKILL);
				waitpid(child, NULL, 0);
				child = 0;
			}
			break;
		case SIGUSR1:
			reap();
			if (child == 0)
				start(argv + 1, &old);
			break;
		case SIGTERM:
		case SIGINT:
			if (child > 0)
				kill(child, SIGKILL);
			return 0;
		}
	}
}
