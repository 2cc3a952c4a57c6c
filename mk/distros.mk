# make check-distros: build and test pm-bot where its users build it (issue 11):
# the hardened gcc build and `make check-normal` in a Debian 13 (trixie) chroot,
# hardened gcc and clang builds with their unit tests in a Debian unstable (sid)
# chroot, and a clang build with its unit tests on this machine. The chroots are
# made with debootstrap from the mirror apt uses here and kept, outside the clone,
# in $(PMBOT_CHROOT_DIR) (default /var/cache/pm-bot/chroots); needs root or
# password-less sudo for them. A chroot that cannot be made (an outside outage) is
# skipped with a loud warning; a build or test failure fails. PMBOT_DISTROS picks
# some of "host trixie sid". See scripts/check-distros.sh.
#
# debootstrap and clang are installed first: a new CI machine has neither
# necessarily, and without debootstrap both chroots were skipped. When apt
# cannot install them (an outage), the script's own loud skip follows.
.PHONY: check-distros
check-distros: ## build and test in Debian trixie and sid chroots and with clang here
	@scripts/install-deps.sh debootstrap clang || \
		echo "check-distros: could not install debootstrap and clang; see the skips below" >&2
	@scripts/check-distros.sh
