# make check-distros: build and test pm-bot where its users build it (issue 11):
# the hardened gcc build and `make check-normal` in a Debian 13 (trixie) chroot,
# hardened gcc and clang builds with their unit tests in a Debian unstable (sid)
# chroot, and a clang build with its unit tests on this machine. The chroots are
# made with debootstrap from the mirror apt uses here and kept, outside the clone,
# in $(PMBOT_CHROOT_DIR) (default /var/cache/pm-bot/chroots); needs root or
# password-less sudo for them. A chroot that cannot be made (an outside outage) is
# skipped with a loud warning; a build or test failure fails. PMBOT_DISTROS picks
# some of "host trixie sid". See scripts/check-distros.sh.
.PHONY: check-distros
check-distros: ## build and test in Debian trixie and sid chroots and with clang here
	@scripts/check-distros.sh
