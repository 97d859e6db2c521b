# SPDX-License-Identifier: GPL-2.0
# bash completion for xk: commands, options and their choices, constant
# names. Everything is asked of xk itself (xk help --topics, xk help
# --options TOPIC, xk gen --list), so it follows the binary it completes.
#
#   . tools/completion/xk.bash      (or install it in bash-completion's dir)
#
# COMPREPLY=($(compgen ...)) is the completion idiom; a topic ("vm run") is
# passed to xk as its words, unquoted.
# shellcheck disable=SC2207,SC2086

# the topic (command) the words before the cursor name, in _xk_topic;
# _xk_after_dashdash: the index of the first word after "--" or of vm
# run's command when one came before the cursor
_xk_find_topic() {
	local xk=$1 topics=$2 w i word takes
	_xk_topic=
	_xk_after_dashdash=
	for ((i = 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		if [ "$word" = -- ]; then
			_xk_after_dashdash=$((i + 1))
			return
		fi
		if [[ $word == -* ]]; then
			# the next word is this option's value unless it has one
			[[ $word == *=* ]] && continue
			takes=$("$xk" help --options $_xk_topic 2>/dev/null |
				grep -c -- "^$word=")
			[ "$takes" != 0 ] && i=$((i + 1))
			continue
		fi
		w=${_xk_topic:+$_xk_topic }$word
		if grep -qxF -- "$w" <<< "$topics"; then
			_xk_topic=$w
		elif [ "$_xk_topic" = "vm run" ]; then
			_xk_after_dashdash=$i
			return
		fi
	done
}

# the kernels in the cache (their directories)
_xk_releases() {
	find "${XK_CACHE:-$HOME/.cache/xkernel}/kernels" -mindepth 1 -maxdepth 1 \
		-type d -printf '%f\n' 2>/dev/null
}

_xk() {
	local xk=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]} topics opts choices sub
	COMPREPLY=()
	topics=$("$xk" help --topics 2>/dev/null) || return
	_xk_find_topic "$xk" "$topics"
	if [ -n "$_xk_after_dashdash" ]; then
		[ "$_xk_topic" != "vm run" ] && return
		if [ "$COMP_CWORD" = "$_xk_after_dashdash" ]; then
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
	fi
	opts=$("$xk" help --options $_xk_topic 2>/dev/null)

	# the value of an option
	if [[ $prev == --* ]] && grep -q -- "^$prev=" <<< "$opts"; then
		choices=$(grep -- "^$prev=" <<< "$opts" | cut -d= -f2 | tr '|' ' ')
		case $prev in
		--field)
			choices="release version dir vmlinuz config headers modules source build_id" ;;
		--release)
			choices=$(_xk_releases) ;;
		--catalog|--output|--glue|--policy)
			COMPREPLY=($(compgen -f -- "$cur"))
			return ;;
		esac
		COMPREPLY=($(compgen -W "$choices" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(cut -d= -f1 <<< "$opts")" -- "$cur"))
		return
	fi

	# the commands of an object
	sub=$(sed -n "s/^${_xk_topic:+$_xk_topic }\([^ ]*\)$/\1/p" <<< "$topics" | sort -u)
	if [ -n "$sub" ] && [ "$_xk_topic" != help ]; then
		COMPREPLY=($(compgen -W "$sub" -- "$cur"))
		return
	fi
	case $_xk_topic in
	help)
		# the words of a topic, after those already given
		local w words=
		for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
			[[ $w == -* || $w == help ]] || words+="$w "
		done
		sub=$(sed -n "s/^$words\([^ ]*\).*/\1/p" <<< "$topics" | sort -u)
		COMPREPLY=($(compgen -W "$sub" -- "$cur")) ;;
	"vm run"|"kernel exec")
		COMPREPLY=($(compgen -c -- "$cur" | sort -u)) ;;
	"kernel use")
		COMPREPLY=($(compgen -W "$(_xk_releases)" -- "$cur")) ;;
	build|gen|unload|settle)
		COMPREPLY=($(compgen -W "$("$xk" gen --list 2>/dev/null)" -- "$cur")) ;;
	load)
		COMPREPLY=($(compgen -f -X '!*.scope' -- "$cur")
			   $(compgen -W "$("$xk" gen --list 2>/dev/null)" -- "$cur")) ;;
	set)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -S = -W "$("$xk" gen --list 2>/dev/null)" -- "$cur")) ;;
	esac
}
complete -F _xk xk
