# Installing like a Unix tool: the version, the pm-bot(1) manual page,
# make install / uninstall and make dist. Included by the Makefile.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [BINDIR=$(PREFIX)/bin]
#                [MANDIR=$(PREFIX)/share/man]
#   make uninstall (the same variables)
#   make dist [DISTDIR=.]    pm-bot-$(VERSION).tar.gz, builds without git
#   make print-version

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
INSTALL ?= install
DISTDIR ?= .

MAN           := $(BUILD)/pm-bot.1
VERSION_STAMP := $(BUILD)/gen/version

.PHONY: man install uninstall dist print-version version-stamp-check

all: $(MAN)
man: $(MAN)

# Every object is compiled with -DPMBOT_VERSION, but only the sources that
# use it (main.c's `pm-bot --version`, the User-Agent of the GitHub and LLM
# clients, the test that checks it) are rebuilt when the version changes:
# they depend on a stamp that is rewritten only when its content differs.
VERSION_SRC := $(shell grep -rl --include='*.c' PMBOT_VERSION src cmd tests/unit 2>/dev/null)
$(VERSION_SRC:%.c=$(BUILD)/obj/%.o): $(VERSION_STAMP)

$(VERSION_STAMP): version-stamp-check
	@mkdir -p $(dir $@)
	$(Q)echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@

# The manual page is made from `pm-bot help` by running the binary.
$(MAN): $(BIN) scripts/gen-man.sh
	@$(if $(V),,echo "  GEN     $@")
	$(Q)scripts/gen-man.sh $(BIN) >$@.tmp || { rm -f $@.tmp; exit 1; }
	$(Q)mv $@.tmp $@

install: $(BIN) $(MAN)
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1'
	$(INSTALL) -m 755 $(BIN) '$(DESTDIR)$(BINDIR)/pm-bot'
	$(INSTALL) -m 644 $(MAN) '$(DESTDIR)$(MANDIR)/man1/pm-bot.1'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/pm-bot' '$(DESTDIR)$(MANDIR)/man1/pm-bot.1'

dist:
	$(Q)scripts/dist.sh '$(VERSION)' '$(DISTDIR)'

print-version:
	@echo '$(VERSION)'
