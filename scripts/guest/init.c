// SPDX-License-Identifier: GPL-2.0
/*
 * The guests' first process. harness.vm boots the kernel with init= set to
 * this program (built static by harness.vm, cached by its source's hash)
 * and rslub_init_next= to virtme-ng-init, which this executes as PID 1.
 *
 * Under TCG, virtme-ng-init spends most of a boot on two services no guest
 * of ours uses: systemd-tmpfiles (6-12 s) and udev's coldplug and settle
 * (12-21 s), while the kernel reaches init in about 4 s; udevd would then
 * also handle every uevent the tests raise (a kobject per cache). All the
 * guests need of udev is the links to the script's I/O ports,
 * /dev/virtio-ports/NAME, which virtme-ng-init looks for before it runs
 * the script. So this makes those links from sysfs, and mounts the
 * writable layer over /usr that vng asks virtme-ng-init for
 * (virtme_rw_overlayN=/usr: the host's /usr below, a tmpfs above) itself,
 * with udevadm (which is also systemd-udevd) taken out of it and
 * systemd-tmpfiles made /bin/true: virtme-ng-init then says "unable to find
 * udevd, skip udev" and goes on. The host's files are not touched.
 *
 * If the ports do not all get their names, or the layer cannot be made,
 * virtme-ng-init runs as vng set it up, udev and all, and the console says
 * why first. A static program: a dynamically linked one, or a shell
 * script's programs, cost TCG's translation of the loader and the
 * libraries at every start (about 10 s of a boot for a script).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* vng's ports for a script (harness.vm always runs one). */
static const char *const ports[] = {
	"virtme.stdin", "virtme.stdout", "virtme.stderr",
	"virtme.dev_stdout", "virtme.dev_stderr", "virtme.ret",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NPORTS ARRAY_SIZE(ports)
#define PORTS_DIR "/sys/class/virtio-ports"
/* About 30 s of 10 ms tries. */
#define TRIES 3000

static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, fd;

	n = snprintf(line, sizeof(line), "rslub-init: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/dev/console", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* Nowhere else to say it if this fails. */
		ssize_t w = write(fd, line, strlen(line));

		(void)w;
		close(fd);
	}
}

/* Reads vportNpM's name into NAME (empty when it has none yet). */
static void port_name(const char *vport, char *name, size_t size)
{
	char path[320];
	ssize_t n;
	int fd;

	name[0] = '\0';
	snprintf(path, sizeof(path), PORTS_DIR "/%s/name", vport);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, size - 1);
	close(fd);
	if (n <= 0)
		return;
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
}

/*
 * Counts the ports of ports[] that have their names; with LINK, links
 * /dev/virtio-ports/NAME to each named port, as udev's rule would.
 */
static size_t named_ports(int link)
{
	bool seen[NPORTS] = { false };
	char name[256], target[300], path[300];
	struct dirent *d;
	size_t i, found = 0;
	DIR *dir;

	dir = opendir(PORTS_DIR);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "vport", 5))
			continue;
		port_name(d->d_name, name, sizeof(name));
		if (!name[0] || strchr(name, '/'))
			continue;
		if (link) {
			snprintf(target, sizeof(target), "../%s", d->d_name);
			snprintf(path, sizeof(path), "/dev/virtio-ports/%s", name);
			unlink(path);
			if (symlink(target, path))
				say("cannot link %s: %s\n", path, strerror(errno));
		}
		for (i = 0; i < NPORTS; i++) {
			if (!seen[i] && !strcmp(name, ports[i])) {
				seen[i] = true;
				found++;
			}
		}
	}
	closedir(dir);
	return found;
}

/* The name of vng's virtme_rw_overlayN=/usr variable, or NULL. */
static char *usr_layer(void)
{
	static char var[64];
	char **e;

	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (strncmp(*e, "virtme_rw_overlay", 17) || !eq || strcmp(eq, "=/usr"))
			continue;
		if ((size_t)(eq - *e) >= sizeof(var))
			continue;
		memcpy(var, *e, eq - *e);
		var[eq - *e] = '\0';
		return var;
	}
	return NULL;
}

/* /usr with a tmpfs above it, as virtme-ng-init would mount it; 0 or -1. */
static int mount_usr(const char *source)
{
	/*
	 * On /run's first tmpfs, which virtme-ng-init's own /run covers; the
	 * layer keeps its upper directory.
	 */
	if (mount("run", "/run", "tmpfs", 0, "mode=0755") ||
	    mkdir("/run/usr", 0755) || mkdir("/run/usr/upper", 0755) ||
	    mkdir("/run/usr/work", 0755))
		return -1;
	return mount(source, "/usr", "overlay", 0,
		     "xino=off,lowerdir=/usr,upperdir=/run/usr/upper,workdir=/run/usr/work");
}

int main(int argc, char **argv)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	const char *next = getenv("rslub_init_next");
	char *usr;
	int tries;
	size_t found;

	(void)argc;
	if (!next || !*next) {
		say("no rslub_init_next= on the kernel command line: a shell\n");
		execl("/bin/sh", "sh", (char *)NULL);
		return 1;
	}
	next = strdup(next);
	unsetenv("rslub_init_next");

	if (mount("sysfs", "/sys", "sysfs", 0, NULL))
		say("cannot mount /sys: %s\n", strerror(errno));
	/*
	 * A port's name reaches the guest after the port, from the host,
	 * through the console driver's control queue.
	 */
	for (tries = 1; (found = named_ports(0)) < NPORTS && tries < TRIES; tries++)
		nanosleep(&tick, NULL);

	usr = usr_layer();
	if (found < NPORTS) {
		say("%zu of %zu script ports named after %d tries: udev runs\n", found,
		    (size_t)NPORTS, tries);
	} else if (!usr) {
		say("no writable layer over /usr on the command line: udev runs\n");
	} else if (mount_usr(usr)) {
		say("cannot mount a layer over /usr (%s): udev runs\n", strerror(errno));
	} else {
		unsetenv(usr);
		unlink("/usr/bin/udevadm");
		unlink("/usr/lib/systemd/systemd-udevd");
		unlink("/usr/bin/systemd-tmpfiles");
		if (symlink("/bin/true", "/usr/bin/systemd-tmpfiles"))
			say("cannot replace systemd-tmpfiles: %s\n", strerror(errno));
		if (mkdir("/dev/virtio-ports", 0755) && errno != EEXIST)
			say("cannot make /dev/virtio-ports: %s\n", strerror(errno));
		named_ports(1);
		say("script ports linked after %d tries; no udev, no systemd-tmpfiles\n",
		    tries);
	}
	umount("/sys");
	argv[0] = (char *)next;
	execv(next, argv);
	say("cannot run %s: %s\n", next, strerror(errno));
	return 1;
}
