# bash completion for pmuctx(1)

# Event names as "pmuctx list" prints them (PMU::NAME), and the bare NAME
# that event strings also accept.
_pmuctx_events()
{
	pmuctx list 2>/dev/null | awk '/^[^# ]/ {
		print $1
		if ((i = index($1, "::")) > 0)
			print substr($1, i + 2)
	}'
}

_pmuctx()
{
	local cur prev words cword cmd i
	_init_completion || return

	# The command is the first word that is neither an option nor the
	# value of --cpu or --event-file.
	cmd=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--cpu | --event-file) ((i++)) ;;
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		case $prev in
		--event-file) _filedir; return ;;
		--cpu) return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--cpu --event-file --help --version' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'stat list check info range help version' -- "$cur"))
		fi
		return
	fi

	case $cmd in
	stat)
		# After the counted command starts, complete its own words.
		for ((i++; i < cword; i++)); do
			case ${words[i]} in
			-e | -M | --metric-group | -r | -I | -x | -o | -p | -t | --data-range | --range-kind) ((i++)) ;;
			--no-inherit | --per-task | --json | --exact) ;;
			--) _command_offset $((i + 1)); return ;;
			-*) ;;
			*) _command_offset $i; return ;;
			esac
		done
		if [[ $prev == -e ]]; then
			local prefix=${cur%"${cur##*,}"}
			COMPREPLY=($(compgen -P "$prefix" -W "$(_pmuctx_events)" -- "${cur##*,}"))
			compopt -o nospace
		elif [[ $prev == -o ]]; then
			_filedir
		elif [[ $prev == -p || $prev == -t ]]; then
			_pids
		elif [[ $prev == --range-kind ]]; then
			COMPREPLY=($(compgen -W 'data data-write data-read insn' -- "$cur"))
		elif [[ $prev == -M || $prev == -r || $prev == -I || $prev == -x || $prev == --metric-group ||
			$prev == --data-range ]]; then
			return
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '-e -M --metric-group -r -I -x --json -o --per-task
				-p -t --no-inherit --data-range --range-kind --exact --help --' -- "$cur"))
		else
			_command_offset $cword
		fi
		;;
	list)
		if [[ $prev == --details ]]; then
			COMPREPLY=($(compgen -W "$(_pmuctx_events)" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--json --all --details --skipped --help' -- "$cur"))
		fi
		;;
	check)
		if [[ $prev == --range-kind ]]; then
			COMPREPLY=($(compgen -W 'data data-write data-read insn' -- "$cur"))
		elif [[ $prev == --range-hw ]]; then
			COMPREPLY=($(compgen -W "module $(pmuctx range --list-hw 2>/dev/null |
				awk '/^[^ ]/ { print $1 }')" -- "$cur"))
		elif [[ $prev == --data-range ]]; then
			return
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--data-range --range-kind --exact --range-hw --help' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_pmuctx_events)" -- "$cur"))
		fi
		;;
	range)
		if [[ $prev == --kind ]]; then
			COMPREPLY=($(compgen -W 'data data-write data-read insn' -- "$cur"))
		elif [[ $prev == --range-hw ]]; then
			COMPREPLY=($(compgen -W "module $(pmuctx range --list-hw 2>/dev/null |
				awk '/^[^ ]/ { print $1 }')" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--range-hw --kind --exact --list-hw --help' -- "$cur"))
		fi
		;;
	help)
		COMPREPLY=($(compgen -W 'stat list check info range' -- "$cur"))
		;;
	esac
} && complete -F _pmuctx pmuctx

# ex: filetype=sh
