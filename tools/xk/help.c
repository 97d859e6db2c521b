// SPDX-License-Identifier: GPL-2.0
/* Man-page style help for every command: xk help [OBJECT [COMMAND]]. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct page {
	const char *topic;
	const char *text;
};

static const struct page pages[] = {
{ "",
"NAME\n"
"    xk - change compiled-in constants of a running Linux kernel\n"
"\n"
"SYNOPSIS\n"
"    xk [-j|--json] [-q|--quiet] OBJECT COMMAND [ARGS]\n"
"\n"
"DESCRIPTION\n"
"    xkernel retunes numeric constants of a running kernel (batch sizes,\n"
"    thresholds, intervals) without a reboot and without rebuilding that\n"
"    kernel, by Scoped Indirect Execution: kprobes at the places where a\n"
"    constant enters a register or memory rewrite that state as if another\n"
"    value had been compiled in. See README.md and docs/.\n"
"\n"
"OBJECTS AND COMMANDS\n"
"    kernel fetch   resolve, download and prepare a kernel into the cache\n"
"    kernel info    show the target kernel (the one commands act on)\n"
"    kernel list    the kernels in the cache, and which is the target, why\n"
"    kernel use     choose the target kernel\n"
"    build          rebuild the objects that use a constant, with other values\n"
"    gen            analyse a constant into a scope table\n"
"    load           arm a scope table in the running kernel, or an eBPF\n"
"                   policy choosing its values\n"
"    set            change a constant's value live (analysing if needed)\n"
"    unload         remove a constant's probes: the compiled-in value again\n"
"    status         constants loaded, values, probes and their hits\n"
"    settle         write a value in force into the kernel text: no probes\n"
"    apply          apply the persistent tunings of /etc/xkernel/*.conf\n"
"    tune           sweep a constant over values, measuring a workload\n"
"    vm run         boot the target kernel under QEMU and run a command\n"
"    vm shell       an interactive shell in the guest\n"
"    help           this page, or the page of a command: xk help vm run\n"
"    version        the version of xk\n"
"\n"
"OPTIONS\n"
"    -j, --json     print the result of any command as one JSON object\n"
"    -q, --quiet    print no progress messages\n"
"    -h, --help     print the help page of the command (xk vm run -h)\n"
"    -V, --version  the version of xk\n"
"\n"
"    Options, these and a command's own, may stand anywhere after xk,\n"
"    before or after the command's arguments (xk gen NAME -j); \"--\" ends\n"
"    them. For xk vm run, the guest's command line ends them too.\n"
"\n"
"ENVIRONMENT\n"
"    XK_CACHE       cache directory (default ~/.cache/xkernel; for root,\n"
"                   an installed xk uses /var/lib/xkernel when it exists).\n"
"                   Scope tables are kept per kernel release under it:\n"
"                   kernels/RELEASE/scopes/CONSTANT.scope\n"
"    XK_RELEASE     the target kernel, over xk kernel use and the defaults\n"
"                   (xk help kernel); in the guest, the release it booted\n"
"    XK_CATALOG     the catalog of constants (default catalog/ beside a\n"
"                   development build, else /usr/share/xkernel/catalog)\n"
"    XK_VM_ACCEL    tcg or kvm: skip the KVM probe\n"
"    XK_DEBUG       print debug messages\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 on failure, 2 on a usage error; see each command.\n" },
{ "kernel",
"NAME\n"
"    xk kernel - the kernels in the cache, and the target among them\n"
"\n"
"COMMANDS\n"
"    xk kernel fetch [--release R] [--no-source]\n"
"    xk kernel info [--release R] [--field NAME]\n"
"    xk kernel list [--release R]\n"
"    xk kernel use RELEASE | --clear\n"
"\n"
"THE TARGET\n"
"    The cache holds Debian kernels, one per release\n"
"    ($XK_CACHE/kernels/RELEASE). kernel info, build, gen, vm run and\n"
"    vm shell act on one of them, the target: the first of\n"
"      1. --release R given to the command;\n"
"      2. XK_RELEASE=R in the environment;\n"
"      3. the kernel chosen with xk kernel use R (kept in $XK_CACHE/target);\n"
"      4. the running kernel (uname -r), when it is in the cache;\n"
"      5. the kernel in the cache, when it holds only one.\n"
"    A kernel named by 1, 2 or 3 must be in the cache: otherwise the\n"
"    command fails, naming it and the kernels there, and never acts on\n"
"    another. With several kernels, none named and the running one not\n"
"    among them, there is no target: the command fails, listing them and\n"
"    the ways to choose. Nothing else changes the target: xk kernel fetch\n"
"    never does (a second kernel fetched beside the only one leaves no\n"
"    target until one is chosen), so a script that must keep one kernel\n"
"    throughout sets XK_RELEASE. kernels/default, which older versions of\n"
"    xk wrote at every fetch, is not read. xk kernel list shows which\n"
"    kernel is the target and why.\n"
"\n"
"    load, set, settle, unload, status, apply and tune act on the running\n"
"    kernel, the one the module is in, whatever the target: the scope\n"
"    tables they read and make are the running release's\n"
"    ($XK_CACHE/kernels/$(uname -r)/scopes), so they take no --release.\n"
"    In the guest, xk vm run sets XK_RELEASE to the release it booted.\n"
"\n"
"    See xk help kernel fetch, kernel info, kernel list, kernel use.\n" },
{ "kernel fetch",
"NAME\n"
"    xk kernel fetch - resolve, download, unpack and prepare a target kernel\n"
"\n"
"SYNOPSIS\n"
"    xk kernel fetch [--release RELEASE] [--no-source]\n"
"\n"
"DESCRIPTION\n"
"    Without --release or XK_RELEASE, the kernel fetched is Debian's\n"
"    current 6.12 cloud-amd64 kernel: the image whose package version\n"
"    equals the candidate of linux-source-6.12 (the version is resolved\n"
"    through apt every time, never hard-coded). With --release (e.g.\n"
"    $(uname -r) on a Debian host), or else XK_RELEASE, the same steps run\n"
"    for that kernel.\n"
"\n"
"    A fetch does not change the target (xk help kernel): it prints\n"
"    whether the kernel fetched is the target, and if not, which is.\n"
"\n"
"    Steps, each skipped when its stamp is present in the cache:\n"
"      1. apt-get download the unsigned image, the headers (with their\n"
"         common part and kbuild) and the source package;\n"
"      2. unpack them under $XK_CACHE/kernels/RELEASE/root, point the\n"
"         headers at the cache, index the modules (depmod);\n"
"      3. unpack the source tree, copy the kernel's .config, run\n"
"         olddefconfig and prepare with the compiler named in the config\n"
"         (CONFIG_CC_VERSION_TEXT), so that single objects can be rebuilt.\n"
"\n"
"OPTIONS\n"
"    --release RELEASE  the kernel release (uname -r) to fetch (default:\n"
"                       XK_RELEASE, else Debian's current 6.12 cloud kernel)\n"
"    --no-source        skip step 3 (enough for the guest and modules)\n"
"\n"
"ERRORS\n"
"    An unknown release, a mirror that cannot be reached, or a missing\n"
"    compiler fail with a message naming the cause; nothing is stamped.\n"
"\n"
"EXAMPLES\n"
"    xk kernel fetch\n"
"    xk -j kernel fetch --release 6.12.117+deb12-cloud-amd64 --no-source\n" },
{ "kernel info",
"NAME\n"
"    xk kernel info - show a target kernel that is in the cache\n"
"\n"
"SYNOPSIS\n"
"    xk kernel info [--release RELEASE] [--field NAME]\n"
"\n"
"DESCRIPTION\n"
"    Prints the release, the package version and the paths of the image,\n"
"    headers, modules and source tree, and why it is the target. Never\n"
"    downloads. Without --release, the target (xk help kernel).\n"
"\n"
"OPTIONS\n"
"    --release R    kernel R of the cache instead of the target\n"
"    --field NAME   print only one of release, version, dir, vmlinuz,\n"
"                   config, headers, modules, source (for scripts)\n"
"\n"
"EXIT STATUS\n"
"    1 when there is no target or R is not in the cache: the message\n"
"    names the kernels the cache holds.\n" },
{ "kernel list",
"NAME\n"
"    xk kernel list - the kernels in the cache, and which is the target\n"
"\n"
"SYNOPSIS\n"
"    xk kernel list [--release R]\n"
"\n"
"DESCRIPTION\n"
"    One line per kernel directory of $XK_CACHE/kernels: '*' for the\n"
"    target, the release, the Debian package version, whether its source\n"
"    tree is prepared (for build and gen), how many scope tables it holds,\n"
"    and for the target the rule that made it so (--release, XK_RELEASE,\n"
"    chosen with 'xk kernel use', the running kernel, the only kernel in\n"
"    the cache; xk help kernel). A kernel whose fetch did not finish is\n"
"    listed as incomplete and is never the target. When there is no\n"
"    target, a last line says why and how to choose one. Never downloads.\n"
"\n"
"    -j: {\"cache\", \"target\", \"target_why\" (option, env, chosen,\n"
"    running, only), \"chosen\", \"problem\" (when there is no target),\n"
"    \"kernels\": [{\"release\", \"version\", \"dir\", \"complete\",\n"
"    \"target\", \"target_why\", \"source_prepared\", \"tables\"}]}.\n"
"\n"
"OPTIONS\n"
"    --release R    the target as a command given --release R sees it\n"
"\n"
"EXIT STATUS\n"
"    0 when the cache could be read, a target or not.\n"
"\n"
"EXAMPLES\n"
"    xk kernel list\n"
"    xk -j kernel list | jq -r .target\n" },
{ "kernel use",
"NAME\n"
"    xk kernel use - choose the target kernel\n"
"\n"
"SYNOPSIS\n"
"    xk kernel use RELEASE\n"
"    xk kernel use --clear\n"
"\n"
"DESCRIPTION\n"
"    Records RELEASE, a kernel in the cache, as the target of the commands\n"
"    to come ($XK_CACHE/target): rule 3 of xk help kernel, over the running\n"
"    kernel and the only one, under --release and XK_RELEASE. It stays\n"
"    until xk kernel use is run again; a fetch does not change it. A chosen\n"
"    kernel removed from the cache is an error, not a fall back to another.\n"
"    --clear removes the choice: the running kernel when it is in the\n"
"    cache, else the only one, is the target again.\n"
"\n"
"OPTIONS\n"
"    --clear        remove the choice\n"
"\n"
"EXIT STATUS\n"
"    1 when RELEASE is not in the cache (the message names those that are).\n"
"\n"
"EXAMPLES\n"
"    xk kernel use 6.12.118+deb12-cloud-amd64\n"
"    xk kernel use --clear\n" },
{ "build",
"NAME\n"
"    xk build - rebuild the objects that use a constant, with other values\n"
"\n"
"SYNOPSIS\n"
"    xk build [--release R] [--catalog FILE] [--jobs N] CONSTANT\n"
"    xk build --list\n"
"\n"
"DESCRIPTION\n"
"    Locates the constant in the target's source (a macro's #define, found\n"
"    by name when the catalog gives no file; a literal's text at file:line),\n"
"    finds the objects whose source names it, builds their baseline with\n"
"    Kbuild, and compiles each again with three other values: two near the\n"
"    default for the linear fit, one farther away to check it. A variant is\n"
"    compiled from the baseline's own recorded command, with the unit\n"
"    preprocessed once (-E -fdirectives-only) and the definition replaced,\n"
"    so the source tree is never edited and compiles run in parallel.\n"
"    Variants are cached by content under $XK_CACHE/kernels/R/xk-build.\n"
"    Never builds vmlinux. Acts on the target kernel (xk help kernel),\n"
"    named on standard error with the rule that chose it.\n"
"\n"
"    A macro whose body is an expression of other macros, (2*HZ),\n"
"    (100 * NSEC_PER_MSEC), HPAGE_PMD_NR, needs no template= either: the\n"
"    kernel's compiler evaluates it with the flags of the first object that\n"
"    uses it, in this configuration (CONFIG_HZ, THP), from the definition\n"
"    that object's unit holds. A product or a sum with one integer literal\n"
"    keeps that literal as the value, in the unit of the rest: (2*HZ) is\n"
"    value 2, built as (V*HZ), so NAME=3 means 3 s; any other body is one\n"
"    value, its C type kept. The report's value: line says which.\n"
"\n"
"OPTIONS\n"
"    --release R     kernel R of the cache instead of the target\n"
"    --catalog FILE  the catalog (default catalog/constants.conf beside xk,\n"
"                    or $XK_CATALOG); module= entries name out-of-tree modules\n"
"    --jobs N        parallel compiles (default: the number of CPUs)\n"
"    --list          the constants of the catalog\n"
"\n"
"ERRORS\n"
"    An unknown constant, a macro defined in several files (the candidates\n"
"    are listed), a body the compiler cannot evaluate without template=\n"
"    (the part of it that fails named: a variable, an inline function's\n"
"    call), a definition under an #if this configuration leaves out, a\n"
"    failing compile (the log's last lines) are reported by cause.\n" },
{ "gen",
"NAME\n"
"    xk gen - analyse a constant into a scope table\n"
"\n"
"SYNOPSIS\n"
"    xk gen [--release R] [--catalog FILE] [-o FILE] [--glue FILE]\n"
"           [--explain] [--prepare N]... [--verify N]... CONSTANT\n"
"\n"
"DESCRIPTION\n"
"    Runs xk build, then for every function that differs between the\n"
"    baseline and the variants: aligns the instructions (branch targets\n"
"    masked, so a longer instruction shifts nothing), takes as seeds the\n"
"    instructions whose immediate moves with the value, executes the span\n"
"    symbolically (growing it backwards until its inputs are live at the\n"
"    probe point, or using the inverse form reg + E(N) - E(default)), fits\n"
"    each immediate as a*N+b (or, when an immediate is no a*N+b but keeps\n"
"    its instruction, takes them per value from the builds: see PER-VALUE\n"
"    SPANS in xk help load), checks the resulting update program by value\n"
"    against a third build, places the probe point (not a branch target;\n"
"    jump-optimizable when the 5-byte window allows) and slices forward to\n"
"    the safe span. What the model cannot do exactly is reported as an\n"
"    unsupported span with the reason, never guessed. Acts on the target\n"
"    kernel, or kernel R of the cache with --release R (xk help kernel).\n"
"\n"
"    Some uses need no span, and the table says so in a note (\"not a\n"
"    span: ...\", -j: notes): boot-time code in which the value only\n"
"    decided whether a boot message was logged, or only armed deadlines\n"
"    (jiffies + N stored: kept as a timer armed before a retune is; the\n"
"    code that re-arms them runs the new value).\n"
"\n"
"    Read-only data the value initialises (const int x = N; in .rodata) is\n"
"    never written: each instruction that loads it becomes a span, found\n"
"    through the relocations of the shipped module (or of the object, for\n"
"    a static of vmlinux); a pointer to it, an export or a global of\n"
"    vmlinux refuses it. A value that sizes heap objects in the one\n"
"    function that uses the constant, which records their size, makes\n"
"    every span of that function state of the call (call-state heap: the\n"
"    value changes only when no thread is in it).\n"
"\n"
"    A variable boot code derives from the value before its first call\n"
"    (CUBIC's beta_scale, computed by cubictcp_register, freed since) is\n"
"    a span of class data per value: each build's boot code is run from\n"
"    its entry, and the variable takes what the build with the value\n"
"    stores (other values are built when set). The module refuses it when\n"
"    the variable no longer holds the baseline's value (a parameter given\n"
"    at boot).\n"
"\n"
"    For a macro whose body is an expression (see xk help build), the line\n"
"    \"value:\" (-j: value) says what the value counts: \"2 in units of HZ\n"
"    (250 jiffies each here): (2*HZ) = 500 jiffies; OOM_REAPER_DELAY=V\n"
"    builds (V*HZ)\"; --prepare, xk set and the fit count in that unit.\n"
"\n"
"    The table goes to $XK_CACHE/kernels/R/scopes/CONSTANT.scope; its format\n"
"    is docs/scope-table.md. For each span it also records which registers\n"
"    hold the function's arguments at the probe point on every path (what a\n"
"    policy reads its context from).\n"
"\n"
"OPTIONS\n"
"    -o FILE     write the table there\n"
"    --glue FILE write the eBPF glue of the table there: a header a policy\n"
"                includes, with per span the argument registers\n"
"                (CONSTANT_SPANi_ARGk(ctx)) and the state the module writes,\n"
"                the bounds, the parameter type xk_CONSTANT_t and the macro\n"
"                XK_POLICY_CONSTANT(choose) with one program per span, which\n"
"                calls xk_choose once (docs/policies.md)\n"
"    --explain   print the annotated disassembly of every span\n"
"    --prepare N build value N for the table's per-value and replayed\n"
"                spans now (each one checked as xk set would), so that\n"
"                setting it later needs no build; repeatable\n"
"    --verify N  check the table against the kernel compiled with N: the\n"
"                objects of its affine spans (a*N+b) are built with N and\n"
"                analysed again with that build as the check, and each\n"
"                span must come out supported with the same fit (it then\n"
"                computed what that build computes, on 256 inputs). Prints\n"
"                per value the spans that agree, disagree (with the\n"
"                reason) and were not compared (that build has other code\n"
"                there, or reads other registers; per-value and replayed\n"
"                spans are built and checked\n"
"                when set); -j: verify. Exit status 1 when one disagrees.\n"
"                Repeatable; bench/fidelity.sh runs it over the bounds\n"
"    --release R, --catalog  as for xk build\n" },
{ "load",
"NAME\n"
"    xk load - arm a scope table in the running kernel\n"
"\n"
"SYNOPSIS\n"
"    xk load [--value N] [--mode immediate|global|per-task] [--timeout MS]\n"
"            [--partial] [--no-build] TABLE|CONSTANT\n"
"    xk load --policy OBJ [--param NAME=VALUE]... [--partial]\n"
"            TABLE|CONSTANT...\n"
"\n"
"DESCRIPTION\n"
"    Sends the table's supported spans to xkernel.ko (when /dev/xkernel is\n"
"    missing: modprobe xkernel, as from the xkernel-dkms package; in a\n"
"    development tree, after that fails, kmod/xkernel.ko beside build/xk).\n"
"    The module registers each probe disabled, checks the symbol and the\n"
"    bytes from the span's start to the probe point against the live text,\n"
"    and arms nothing unless every span matches; then the value takes\n"
"    effect. A constant's table comes from the cache of the running\n"
"    kernel's release ($XK_CACHE/kernels/$(uname -r)/scopes), and is made\n"
"    (xk gen) when missing, from the running kernel, which must then be in\n"
"    the cache; the target of xk gen plays no part (xk help kernel).\n"
"\n"
"    A constant with a use the analysis refused (an unsupported span) is\n"
"    refused as a whole, naming the uses: retuning the others would run a\n"
"    kernel built with neither value. --partial accepts that; xk status then\n"
"    lists the uses that keep the compiled-in value. A refused use that sizes\n"
"    an object (a static array, or a heap object: the value reaches an\n"
"    allocator, kvcalloc(SWAP_SLOTS_CACHE_SIZE, ...)) refuses every value\n"
"    but the compiled-in one, --partial or not: what was allocated under\n"
"    one value would be used under another (unless every use lies in the\n"
"    allocating function: xk help gen).\n"
"\n"
"    With --policy, an eBPF policy (an Xk-tune, docs/policies.md) chooses the\n"
"    values instead, per execution of each span, from its context (device,\n"
"    flow, cgroup, task). In order: the object is opened and what it holds\n"
"    checked before anything reaches the kernel (a policy may only choose\n"
"    values: its programs must be kprobe, kretprobe, ksyscall, kretsyscall,\n"
"    kprobe.multi, kretprobe.multi, tracepoint, raw_tracepoint, tp_btf,\n"
"    fentry or fexit programs, none of them nor their subprograms calling a\n"
"    helper that writes memory or a return value or signals, such as\n"
"    bpf_probe_write_user or bpf_override_return, or a kfunc other than\n"
"    xk_choose, and no map may be pinned or of type struct_ops), its\n"
"    parameters set and checked (every one typed xk_CONSTANT_t must lie in\n"
"    that constant's bounds), verified by the kernel, the tables validated\n"
"    as above but left disarmed, every span's program handed to the module\n"
"    (with the cookie that binds it to the span: a secret the module issued\n"
"    for this load), every other program attached as its section says and\n"
"    its link pinned under /sys/fs/bpf/xkernel/POLICY/\n"
"    (POLICY: the object's file name less .bpf.o). Any failure undoes all of\n"
"    it. The policy changes kernel state only through the module's kfunc\n"
"    xk_choose, which takes a value (clamped to the bounds) and writes the\n"
"    state the table gives for it, once per execution of the span, and only\n"
"    for the programs attached so; sleepable programs cannot call it. Other\n"
"    calls are refused, counted and logged.\n"
"\n"
"OPTIONS\n"
"    --value N   the value (default: the compiled-in one); must lie in the\n"
"                table's bounds\n"
"    --mode      immediate (default): at once; global: only when no thread\n"
"                is inside any safe span of the constant; per-task: at once\n"
"                for every thread outside the safe spans, and for a thread\n"
"                inside only once it leaves them (it keeps computing with the\n"
"                old value meanwhile)\n"
"    --timeout   global and per-task modes: give up after MS ms (default\n"
"                1000, at most 60000), leaving the old value in force for\n"
"                every thread; the wait ends early, the same way, when xk is\n"
"                killed\n"
"    --policy OBJ  a BPF object built against the glue of these constants\n"
"                (make policies builds bpf/*.bpf.c into build/bpf/)\n"
"    --param NAME=VALUE  set the policy's const volatile global NAME (an\n"
"                integer, or a string for a char array) before it loads\n"
"    --partial   retune the supported uses of a constant some of whose\n"
"                uses the analysis refused; those keep the compiled-in value\n"
"    --no-build  refuse a value that spans of the per-value form have no\n"
"                parameters for yet, instead of building them (a machine\n"
"                without the kernel's source and compiler; xk gen --prepare\n"
"                makes them ahead of time)\n"
"\n"
"PER-VALUE SPANS\n"
"    A span whose immediates are no a*N+b of the value (a division by N\n"
"    turned into a multiply and a shift, a shift by log2 N, a jiffies\n"
"    conversion) takes them per value from a build with that value. The\n"
"    table holds them for the values built so far; any other value is\n"
"    built when it is loaded or set (seconds: only the objects of those\n"
"    spans, with the unit cached), accepted only when that build's function\n"
"    has the baseline's instructions but for immediates and computes, by\n"
"    value, what the span's program computes with them; else the value is\n"
"    refused, naming the span and the instruction that differs. The new\n"
"    parameters are kept in the cached table and handed to the module,\n"
"    which refuses a value none were given for. Such spans are never\n"
"    settled and cannot be driven by a policy.\n"
"    A function whose code changes form between the default and the values\n"
"    next to it (a power-of-two default: shifts and masks there, multiplies\n"
"    at N+1) is analysed by shape: with builds of 2N, 4N and N/2, its spans\n"
"    all per value. Such a constant takes the values whose build has the\n"
"    baseline's shape (in practice, of the default's kind: PCP_BATCH_DIVISOR\n"
"    takes 8 and 16, not 6).\n"
"    A function whose builds differ from the baseline only in short\n"
"    straight-line regions (another register allocation or schedule at\n"
"    every value: KYBER_ASYNC_PERCENT's x*75/100) is replayed: at each\n"
"    region the module writes the registers and flags the build with the\n"
"    value in force leaves there, and its stores (up to four, each where\n"
"    the baseline's region stores), and skips the region. Any other value\n"
"    is built when set, and refused when its build changes code elsewhere\n"
"    or a region of it stores where the baseline's does not. A\n"
"    value of such a constant changes only when no thread is inside the\n"
"    function (global, even when immediate is asked; set reports the mode\n"
"    used), and unload goes back to the default that way first.\n"
"    A function whose stack frame the constant sizes (an array on the\n"
"    stack: IO_REQ_ALLOC_BATCH's void *reqs[8]) keeps its compiled-in\n"
"    frame, which holds any smaller array: the table's upper bound becomes\n"
"    the default (a note says why; set quotes it), and its spans are state\n"
"    of the call: their safe span is the whole function, the value changes\n"
"    only when no thread is in it (global, even when immediate is asked),\n"
"    unload goes back the same way, and no policy drives them. A slot of\n"
"    the frame that moves (buf[N - 1]) is refused.\n"
"    A variable the constant initialises (a sysctl's default or bound, a\n"
"    module parameter: SK_MEMORY_PCPU_RESERVE's net.core.mem_pcpu_rsv) has\n"
"    no probe: the module writes it as the build with the value holds it\n"
"    when the value changes, and the compiled-in value back at unload, each\n"
"    time only if it still holds what the previous value put there. A\n"
"    value set since through the variable's own interface stays (logged);\n"
"    a variable that no longer holds the compiled-in value refuses the\n"
"    load. Policies cannot drive such a constant.\n"
"\n"
"ERRORS\n"
"    A table of another build names the function, offset and bytes that\n"
"    differ; a value out of bounds, a caller without CAP_SYS_ADMIN and a\n"
"    transition that times out are refused; nothing stays registered. A\n"
"    policy the verifier refuses comes back with the verifier's last words;\n"
"    an unknown parameter or one out of bounds is named. A policy holding\n"
"    more than that check allows is refused with every program, helper,\n"
"    kfunc and map at fault named (\"program P (section lsm/file_open) is an\n"
"    lsm program\", \"... calls bpf_probe_write_user\"), nothing loaded.\n" },
{ "set",
"NAME\n"
"    xk set - change a constant's value in the running kernel\n"
"\n"
"SYNOPSIS\n"
"    xk set [--mode immediate|global|per-task] [--timeout MS] [--partial]\n"
"           [--no-build] [--settle] CONSTANT=VALUE...\n"
"\n"
"DESCRIPTION\n"
"    Changes the value of a loaded constant; a constant not loaded yet is\n"
"    loaded with that value, its scope table made first (xk gen) when the\n"
"    cache has none for the running kernel (as for xk load: the running\n"
"    kernel's tables, whatever the target). Several CONSTANT=VALUE make\n"
"    one transaction: they\n"
"    switch together or not at all (immediate: at one instant with every\n"
"    CPU stopped; global: when no thread is inside any of their safe\n"
"    spans). Every change is logged by the kernel with the caller and the\n"
"    old and new values. A constant driven by a policy is refused: its\n"
"    values are the policy's until it is unloaded. A constant is named by\n"
"    its catalog entry, or, for a macro, by its name alone (its definition\n"
"    is found in the source). Options as for xk load; --partial,\n"
"    --no-build and a value of per-value spans as there.\n"
"    --settle settles the constants once the value is in force (xk settle).\n"
"    A settled constant is probed again, its text back as compiled, before\n"
"    the new value takes effect.\n" },
{ "settle",
"NAME\n"
"    xk settle - write a constant's value into the kernel text\n"
"\n"
"SYNOPSIS\n"
"    xk settle [--undo] CONSTANT...\n"
"\n"
"DESCRIPTION\n"
"    For a loaded constant whose value is in force for every thread, rewrites\n"
"    in place the immediates of each span that can hold the value (the\n"
"    instruction the compiler emitted, same length, only its immediate\n"
"    different) and removes that span's probe: its steady-state cost is zero.\n"
"    The text changes under a kprobe's int3 on the instruction, with the\n"
"    kernel's own text_poke, while the span's probe still writes the value,\n"
"    so no thread sees another value at any instant. A span keeps its probe,\n"
"    and xk status says why, when its value needs a longer immediate, when\n"
"    another kprobe or patch holds those bytes, or when its rewrite reads\n"
"    what it writes. A new value (xk set), --undo and xk unload first put\n"
"    the compiled-in bytes and the probes back the same way; while any span\n"
"    is settled, xkernel.ko cannot be removed. Refused for a policy-driven\n"
"    constant, during a transition, and under lockdown. Needs text_poke,\n"
"    which is not exported to modules: it is found through kallsyms, and\n"
"    settling is refused where IBT seals it against indirect calls.\n" },
{ "unload",
"NAME\n"
"    xk unload - remove a constant's probes\n"
"\n"
"SYNOPSIS\n"
"    xk unload CONSTANT | --all\n"
"\n"
"DESCRIPTION\n"
"    Unregisters every probe of the constant: the kernel runs its compiled-in\n"
"    code again (settled spans get their compiled-in bytes back first; if\n"
"    that cannot be done, the constant stays loaded). Logged with the caller. A constant driven by a policy takes\n"
"    the policy and every constant it drives with it: the links are unpinned,\n"
"    xk waits (at most 5 s) until the kernel has freed the programs, then the\n"
"    constants are unloaded.\n" },
{ "status",
"NAME\n"
"    xk status - constants loaded in the running kernel\n"
"\n"
"SYNOPSIS\n"
"    xk [-j] status\n"
"\n"
"DESCRIPTION\n"
"    For each loaded constant: its value, the compiled-in value, the bounds,\n"
"    the time the last change took, and each probe with its rewrite count and\n"
"    whether the kernel jump-optimized it (from debugfs), or that the span is\n"
"    settled (no probe), or why it is not after xk settle; a variable the\n"
"    constant initialises with the times it was written (no probe). For a constant\n"
"    driven by a policy: the policy, its counts of choices (clamped to the\n"
"    bounds, pinned), writes, refused writes and safe-span exits, and per\n"
"    context (the label the policy gave) the last value chosen and how often;\n"
"    then the kfunc calls refused away from any policy-driven span. From the\n"
"    constant's table in the cache: the uses that keep the compiled-in value\n"
"    (loaded with --partial) and the table's notes, what a retune leaves as\n"
"    it is (what boot-time code computed, the boot task's state, bounds\n"
"    narrowed); -j: \"kept\" and \"notes\". That table is the running\n"
"    kernel's ($XK_CACHE/kernels/$(uname -r)/scopes), whatever the target.\n" },
{ "apply",
"NAME\n"
"    xk apply - apply the persistent tunings in one transaction\n"
"\n"
"SYNOPSIS\n"
"    xk apply [--dry-run] [--mode immediate|global|per-task] [--timeout MS]\n"
"             [--partial] [DIR...]\n"
"\n"
"DESCRIPTION\n"
"    Reads the files *.conf of /etc/xkernel and /usr/lib/xkernel as\n"
"    sysctl.d(5) reads its own: a file in /etc/xkernel overrides the file\n"
"    of the same name in /usr/lib/xkernel (a link to /dev/null there masks\n"
"    it); the files are read in the lexical order of their names, whatever\n"
"    their directory, and a later setting of a constant overrides an\n"
"    earlier one. Given DIRs replace the two, highest precedence first.\n"
"\n"
"    Each line is CONSTANT = VALUE (a number, 0x... for hexadecimal), or\n"
"    mode = immediate|global|per-task for the transaction (the last one\n"
"    read counts; --mode overrides it; default immediate). '#' starts a\n"
"    comment, as ';' does at the start of a line; blank lines are skipped.\n"
"\n"
"        # /etc/xkernel/50-block.conf\n"
"        BLK_MAX_REQUEST_COUNT = 4\n"
"        mode = global\n"
"\n"
"    All the settings then switch in one transaction, as with\n"
"    xk set A=1 B=2: each constant not loaded yet is loaded at its\n"
"    compiled-in value (its scope table made first when the cache has none\n"
"    for the running kernel's release), then all change together. A\n"
"    constant whose table cannot be made or loaded, whose value is out of\n"
"    its bounds or whose values a policy chooses gets one line naming it,\n"
"    its file and line, and the cause, and is left out: the rest are still\n"
"    applied. A line that cannot be read is named the same way and skipped.\n"
"    One transaction switches at most 8 constants.\n"
"\n"
"    debian/xkernel.service runs xk apply at boot (after\n"
"    systemd-modules-load.service) with XK_CACHE=/var/lib/xkernel, where\n"
"    the scope tables are kept per kernel release, and xk unload --all when\n"
"    it stops.\n"
"\n"
"OPTIONS\n"
"    --dry-run, -n  read the files and print the files (and the files they\n"
"                   override), the settings that win with their file and\n"
"                   line, and the mode; touch nothing (no module, no root)\n"
"    --mode M       the transaction's mode, over the files' mode = line\n"
"    --timeout MS   as for xk set\n"
"    --partial      as for xk load\n"
"\n"
"EXIT STATUS\n"
"    0 when every setting was applied (or, with --dry-run, read); 1 when a\n"
"    line could not be read or a constant was left out, even though the\n"
"    others were applied, or when the transaction failed (then none is).\n"
"\n"
"EXAMPLES\n"
"    xk apply --dry-run\n"
"    xk -j apply\n"
"    xk apply --dry-run ./etc ./lib\n" },
{ "tune",
"NAME\n"
"    xk tune - sweep a constant over values, measuring a workload\n"
"\n"
"SYNOPSIS\n"
"    xk tune CONSTANT --values V1,V2,... --run CMD --metric CMD\n"
"            [--repeat N] [--mode immediate|global|per-task] [--timeout MS]\n"
"            [--csv FILE] [--plot FILE.png|FILE.svg [--label TEXT]\n"
"            [--log-y]] [--partial]\n"
"\n"
"DESCRIPTION\n"
"    For each value in turn: sets the constant as xk set does (the same\n"
"    transition, in --mode), runs the workload --run through /bin/sh -c,\n"
"    then runs --metric through /bin/sh -c with the workload's standard\n"
"    output on its standard input, and reads the last line the metric\n"
"    prints as a number; --repeat times (default 3). The workload and the\n"
"    metric see XK_TUNE_VALUE (the value in force) and XK_TUNE_RUN (1..N)\n"
"    in their environment; the workload's standard error is xk's.\n"
"\n"
"    Afterwards the constant gets its original value back (through the\n"
"    same path; immediate when a --mode transition times out), or is\n"
"    unloaded when it was not loaded before. That also happens when the\n"
"    workload or the metric fails (the sweep stops, naming the value and\n"
"    the run), and on SIGINT, SIGTERM or SIGHUP (the running command is\n"
"    sent SIGTERM; xk exits with 128 + the signal).\n"
"\n"
"    Prints one line per value: the value, mean, sample standard\n"
"    deviation, min, max and n of the metric.\n"
"\n"
"OPTIONS\n"
"    --values LIST  the values, comma-separated (at most 64)\n"
"    --run CMD      the workload, a shell command\n"
"    --metric CMD   a shell command that prints a number for one run,\n"
"                   reading the workload's output on its standard input\n"
"    --repeat N     runs per value (default 3)\n"
"    --mode M       how each value comes into force, as for xk set\n"
"    --timeout MS   global and per-task modes, as for xk set\n"
"    --csv FILE     write the table as CSV: a header line\n"
"                   (value,mean,stdev,min,max,n) and one row per value\n"
"    --plot FILE    draw the mean and its standard deviation (error bars)\n"
"                   per value with gnuplot (gnuplot-nox): .png or .svg;\n"
"                   the x axis is logarithmic when the values span 16x\n"
"    --label TEXT   the plot's y axis (default: the metric command)\n"
"    --log-y        a logarithmic y axis\n"
"    --partial      as for xk load\n"
"\n"
"EXIT STATUS\n"
"    0 when the sweep finished and the original value is back; 1 when a\n"
"    value could not be set, the workload or the metric failed, or the\n"
"    original value could not be restored (said so); 128 + N when signal\n"
"    N stopped it.\n"
"\n"
"EXAMPLES\n"
"    xk tune BLK_MAX_REQUEST_COUNT --values 4,8,16,32,64,128 \\\n"
"        --run 'fio --output-format=json job.fio' \\\n"
"        --metric 'jq .jobs[0].read.iops' --plot iops.png\n"
"    xk -j tune SHRINK_BATCH --values 64,128,256 --repeat 5 \\\n"
"        --run ./workload.sh --metric 'grep -c ok' --csv shrink.csv\n"
"\n"
"    docs/tuning.md shows a sweep of BLK_MAX_REQUEST_COUNT on null_blk.\n" },
{ "vm",
"NAME\n"
"    xk vm - the target kernel in a QEMU guest\n"
"\n"
"COMMANDS\n"
"    xk vm run [OPTIONS] [--] COMMAND [ARGS]\n"
"    xk vm shell [OPTIONS]\n" },
{ "vm run",
"NAME\n"
"    xk vm run - boot the target kernel and run one command in it as root\n"
"\n"
"SYNOPSIS\n"
"    xk vm run [--release R] [--timeout S] [--mem MB] [--smp N]\n"
"              [--deterministic | --multi-thread] [--debian | --image DIR]\n"
"              [--] COMMAND [ARGS]\n"
"\n"
"DESCRIPTION\n"
"    Boots the target kernel (xk help kernel) under QEMU (TCG; KVM only\n"
"    when a probe boot shows that it works here, remembered per host\n"
"    kernel) with an initramfs whose init mounts the host's root file\n"
"    system read-only (virtiofs) under a writable tmpfs overlay. COMMAND\n"
"    runs in the same working directory as on the host, with the host's\n"
"    tools, the project's build, /lib/modules of the target kernel,\n"
"    debugfs, tracefs, bpffs and cgroup2 mounted. Nothing the guest writes\n"
"    reaches the host. The command's output is streamed; variables named\n"
"    XK_* are passed in, XK_RELEASE set to the release booted.\n"
"\n"
"    With --debian the guest is a Debian bookworm system instead\n"
"    (scripts/debian-image.sh makes it: systemd as init, dpkg, DKMS, the\n"
"    target kernel's image and headers packages), booted from a\n"
"    copy-on-write overlay of its disk image, so nothing reaches the image.\n"
"    When the system is up, its xk-guest.service runs COMMAND in\n"
"    /host<working directory> (the host's / is mounted read-only at /host;\n"
"    XK_CACHE does not travel), then powers off. A command that creates\n"
"    /run/xk-guest/reboot and exits asks for a reboot: the same disk boots\n"
"    again and COMMAND runs again (at most 4 boots a run).\n"
"\n"
"    Each run keeps console.log (kernel console, live) and dmesg.log (the\n"
"    whole kernel log at the end) under $XK_CACHE/vm/runs/; the newest is\n"
"    $XK_CACHE/vm/last. XK_VM_KEEP_DISK=1 keeps a Debian run's disk.qcow2.\n"
"\n"
"OPTIONS\n"
"    --timeout S      kill the guest after S seconds (default 900)\n"
"    --mem MB         guest memory (default 2048)\n"
"    --smp N          guest CPUs (default 2)\n"
"    --deterministic  single-threaded TCG with -icount shift=0: guest time\n"
"                     counts instructions (for cost measurements)\n"
"    --multi-thread   multi-threaded TCG, one host thread per guest CPU:\n"
"                     faster with several host cores, but QEMU may then let\n"
"                     one CPU run a kernel text site while another patches\n"
"                     it (static keys, static calls: the kernel's own), so\n"
"                     the guest can oops at a site nobody probed. Without\n"
"                     it, TCG is single-threaded: the CPUs take turns.\n"
"    --release R      kernel R of the cache instead of the target\n"
"                     (xk help kernel)\n"
"    --debian         the Debian guest: $XK_CACHE/debian/RELEASE\n"
"    --image DIR      the Debian guest from DIR (rootfs.ext4, initrd.img)\n"
"\n"
"EXIT STATUS\n"
"    The exit status of COMMAND; 124 when the guest timed out (the tail of\n"
"    the console is printed); 125 when the guest could not run the command\n"
"    (no kernel fetched, QEMU missing, kernel panic).\n"
"\n"
"EXAMPLES\n"
"    xk vm run -- uname -r\n"
"    xk vm run --timeout 600 -- tests/guest/run.sh\n"
"    xk vm run --debian -- tests/debian/test_installed.sh\n" },
{ "vm shell",
"NAME\n"
"    xk vm shell - an interactive root shell in the guest\n"
"\n"
"SYNOPSIS\n"
"    xk vm shell [--release R] [--mem MB] [--smp N]\n"
"                [--deterministic | --multi-thread]\n"
"                [--debian | --image DIR]\n"
"\n"
"DESCRIPTION\n"
"    As xk vm run, with the terminal attached to the guest's shell. Leave\n"
"    with 'exit' (the guest powers off).\n" },
{ "help",
"NAME\n"
"    xk help - show the help page of a command\n"
"\n"
"SYNOPSIS\n"
"    xk help [--man] [OBJECT [COMMAND]]\n"
"    xk help --topics\n"
"    xk help --options [OBJECT [COMMAND]]\n"
"\n"
"DESCRIPTION\n"
"    Prints the help page of a command; xk OBJECT COMMAND -h does too.\n"
"    The pages are the one source of the man pages in docs/man\n"
"    (tools/xk/gen-man.sh).\n"
"\n"
"OPTIONS\n"
"    --man       the page as a man page (roff), e.g. xk-vm-run.1\n"
"    --topics    every topic that has a page, one a line\n"
"    --options   the options of a command, one a line: --name, --name=\n"
"                when it takes a value, --name=a|b|c for a choice (what\n"
"                tools/completion/xk.bash completes)\n" },
{ "version",
"NAME\n"
"    xk version - print the version of xk\n" },
};

static const char *page_text(const char *topic)
{
	for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
		if (!strcmp(pages[i].topic, topic))
			return pages[i].text;
	return NULL;
}

int print_help(const char *topic)
{
	const char *text = page_text(topic);

	if (!text)
		return -ENOENT;
	fputs(text, stdout);
	return 0;
}

/* One line of a page as roff text: escapes, and no request by accident. */
static void put_roff(const char *line, size_t n)
{
	if (n && (line[0] == '.' || line[0] == '\''))
		fputs("\\&", stdout);
	for (size_t i = 0; i < n; i++) {
		if (line[i] == '\\')
			fputs("\\e", stdout);
		else if (line[i] == '-')
			fputs("\\-", stdout);
		else
			putchar(line[i]);
	}
	putchar('\n');
}

/*
 * The page of topic as a man page (xk-vm-run.1 for "vm run"): a heading
 * (a line that is not indented) is a section, the text under it is kept
 * as laid out, less the page's indentation of four.
 */
static int print_man(const char *topic)
{
	const char *text = page_text(topic), *end;
	bool filled = true, blank = false;
	char name[64], words[64], page[64];

	if (!text)
		return -ENOENT;
	snprintf(words, sizeof(words), "xk%s%s", topic[0] ? " " : "", topic);
	snprintf(page, sizeof(page), "%s", words);
	for (char *c = page; *c; c++)
		*c = *c == ' ' ? '-' : *c;
	snprintf(name, sizeof(name), "%s", page);
	for (char *c = name; *c; c++)
		*c = toupper((unsigned char)*c);
	printf(".TH %s 1 \"\" \"xk %s\" \"xkernel\"\n", name, XK_VERSION);
	for (const char *line = text; *line; line = *end ? end + 1 : end) {
		size_t indent = strspn(line, " ");

		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (line == end) {
			blank = true;	/* printed unless a section follows */
			continue;
		}
		if (!indent) {
			printf("%s.SH ", filled ? "" : ".fi\n");
			put_roff(line, end - line);
			filled = !strncmp(line, "NAME", 4);
			if (!filled)
				puts(".nf");
		} else {
			if (blank)
				putchar('\n');
			indent = indent > 4 ? 4 : indent;
			line += indent;
			/* whatis: the page's name as its file names it */
			if (filled && !strncmp(line, words, strlen(words)) &&
			    line[strlen(words)] == ' ') {
				fputs(page, stdout);
				line += strlen(words);
			}
			put_roff(line, end - line);
		}
		blank = false;
	}
	if (!filled)
		puts(".fi");
	return 0;
}

struct help_args {
	bool man, topics, options;
};

static int do_help(void *args, int argc, char **argv)
{
	const struct help_args *a = args;
	char topic[256] = "";

	if (a->topics) {
		for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
			printf("%s\n", pages[i].topic);
		return 0;
	}
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(topic);

		snprintf(topic + n, sizeof(topic) - n, "%s%s", n ? " " : "",
			 argv[i]);
	}
	if (a->options && cli_command(topic)) {
		cli_print_options(cli_command(topic));
		return 0;
	}
	if (a->options || (a->man ? print_man(topic) : print_help(topic))) {
		p_err("no help page for '%s'; 'xk help' lists the commands",
		      topic);
		return XK_EXIT_USAGE;
	}
	return 0;
}

static struct help_args help_args;
static const struct cli_opt help_opts[] = {
	{ "man", 0, CLI_FLAG, offsetof(struct help_args, man) },
	{ "topics", 0, CLI_FLAG, offsetof(struct help_args, topics) },
	{ "options", 0, CLI_FLAG, offsetof(struct help_args, options) },
	{ NULL },
};

const struct cli_cmd cmd_help = { "help", do_help, help_opts, &help_args, -1 };
