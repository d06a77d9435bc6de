# shellcheck shell=bash
# Sourced: pmuctx_ccache_env, the environment that sends this tree's C
# compiles through ccache (a host package of make deps).
#
# Why: a make check in a clean clone (CI's, a newcomer's) builds the
# module about 16 times (a lane kernel each, W=1, sparse) and the static
# userspace twice, about 650 s of CPU, nearly all of it the same objects
# as the last check.  ccache keys on content (each source, every header it
# reads, the compiler's binary, the flags), never on mtimes, and replays a
# compile's warnings, so a build through it is the same build.
#
# The compilers keep their names: a directory of links named after them
# (gcc, gcc-12, aarch64-linux-gnu-gcc-12, ...) to ccache goes first on
# PATH, and ccache runs the real one it finds after it.  The kernels'
# Makefiles name their compiler themselves, and the tools derive AR from
# CC's name, so neither sees a wrapper.  A link is made only where none
# is (ln -s of a new name is atomic): two builds may set up at once.
#
# PMUCTX_NO_CCACHE=1, or no ccache on the host (sid's build root): nothing.
pmuctx_ccache_env() {
	local ccache cc wrappers=$PMUCTX_CACHE/ccache/bin
	[ -z "${PMUCTX_NO_CCACHE:-}" ] || return 1
	ccache=$(command -v ccache) || return 1
	mkdir -p "$wrappers" "$PMUCTX_CACHE/ccache/objects" || return 1
	for cc in $(compgen -c | grep -xE '(aarch64-linux-gnu-)?gcc(-[0-9]+)?' | sort -u); do
		[ -e "$wrappers/$cc" ] || ln -s "$ccache" "$wrappers/$cc" 2>/dev/null || true
	done
	case ":$PATH:" in
	*":$wrappers:"*) ;;
	*) PATH=$wrappers:$PATH ;;
	esac
	# Depend mode takes a compile's headers from its -MD output: a miss
	# costs no extra preprocessor run (kbuild passes -Wp,-MMD).
	export PATH CCACHE_DIR=$PMUCTX_CACHE/ccache/objects CCACHE_MAXSIZE=3G \
		CCACHE_COMPILERCHECK=content CCACHE_DEPEND=1 CCACHE_NOHASHDIR=1
}
