#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Reads the hardware cache event maps (facts: the codes each CPU's driver
# programs for perf's generic cache events) from Linux 6.1's x86 and arm64
# perf drivers and prints them as C data for tools/lib/cache.c:
#
#   scripts/cache-maps.py LINUX_SRC > tools/lib/cache_maps.inc
#
# LINUX_SRC needs arch/x86/events/{intel,amd}/core.c,
# arch/x86/include/asm/intel-family.h, arch/arm64/kernel/perf_event.c and
# arch/arm64/include/asm/perf_event.h (Debian's linux-source-6.1 tarball).
# The model groups and the per-model overrides below follow intel_pmu_init().
import re, sys
src = sys.argv[1]
TYPES = ['L1D', 'L1I', 'LL', 'DTLB', 'ITLB', 'BPU', 'NODE']
OPS = ['OP_READ', 'OP_WRITE', 'OP_PREFETCH']
RES = ['RESULT_ACCESS', 'RESULT_MISS']

def defines(text):
    d = {}
    text = re.sub(r'\\\n', ' ', text)
    for m in re.finditer(r'^#define\s+(\w+)\s+(.+?)\s*$', text, re.M):
        d[m.group(1)] = m.group(2)
    return d

def evaluate(expr, d, depth=0):
    expr = re.sub(r'/\*.*?\*/', '', expr).strip()
    expr = re.sub(r'(0x[0-9a-fA-F]+|\d+)U?L*L*\b', r'\1', expr)
    expr = re.sub(r'BIT(?:_ULL)?\((\d+)\)', r'(1<<\1)', expr)
    def sub(m):
        n = m.group(0)
        if n in d:
            return '(' + str(evaluate(d[n], d, depth + 1)) + ')'
        return n
    expr = re.sub(r'\b[A-Z_][A-Z0-9_]*\b', sub, expr)
    return eval('(' + expr + ')')

def parse_map(text, name, d):
    m = re.search(r'\b%s\s*\[PERF_COUNT_HW_CACHE_MAX\][^=]*=\s*\{' % re.escape(name), text)
    i = m.end(); depth = 1; j = i
    while depth:
        depth += {'{': 1, '}': -1}.get(text[j], 0); j += 1
    body = re.sub(r'/\*.*?\*/', '', text[i:j - 1], flags=re.S)
    out = {}
    cur = [None, None]
    for tok in re.finditer(r'\[\s*C\(\s*(\w+)\s*\)\s*\]\s*=\s*(\{|[^,}]+)|PERF_CACHE_MAP_ALL_UNSUPPORTED', body):
        if tok.group(0).startswith('PERF_CACHE'):
            continue
        key, val = tok.group(1), tok.group(2)
        if key in TYPES:
            cur[0] = key
        elif key in OPS:
            cur[1] = key
        elif key in RES:
            out[(cur[0], cur[1], key)] = evaluate(val, d)
    return out

intel = open(src + '/arch/x86/events/intel/core.c').read()
amd = open(src + '/arch/x86/events/amd/core.c').read()
arm = open(src + '/arch/arm64/kernel/perf_event.c').read()
dI = defines(intel); dA = defines(amd)
dR = defines(arm)


fam = defines(open(src + '/arch/x86/include/asm/intel-family.h').read())
def models(names):
    return [int(fam['INTEL_FAM6_' + n].split()[0], 16) for n in names]

def idmap(text, name, d):
    return {k: v & ((1 << 64) - 1) for k, v in parse_map(text, name, d).items()}

INVALID = (1 << 64) - 1
def merged(ids, extra, overrides={}, extra_overrides={}):
    ids = dict(ids); ids.update(overrides)
    extra = dict(extra); extra.update(extra_overrides)
    return {k: (v, extra.get(k, 0)) for k, v in ids.items() if v}

def emit(name, m):
    print('static const struct cache_map_entry %s[] = {' % name)
    for (t, o, r), (v, x) in sorted(m.items(), key=lambda kv: (TYPES.index(kv[0][0]), OPS.index(kv[0][1]), RES.index(kv[0][2]))):
        val = 'CACHE_INVALID' if v == INVALID else '0x%x' % v
        print('\t{ C_%s, C_%s, C_%s, %s, 0x%x },' % (t, o[3:], r[7:], val, x))
    print('\t{ C_END, 0, 0, 0, 0 }\n};\n')

I = lambda n: idmap(intel, n + '_hw_cache_event_ids', dI)
X = lambda n: idmap(intel, n + '_hw_cache_extra_regs', dI)
itlb_inval = {('ITLB', 'OP_READ', 'RESULT_ACCESS'): INVALID}
bdw_extra = {
    ('LL', 'OP_READ', 'RESULT_MISS'): evaluate('HSW_DEMAND_READ|BDW_L3_MISS|HSW_SNOOP_DRAM', dI),
    ('LL', 'OP_WRITE', 'RESULT_MISS'): evaluate('HSW_DEMAND_WRITE|BDW_L3_MISS|HSW_SNOOP_DRAM', dI),
    ('NODE', 'OP_READ', 'RESULT_ACCESS'): evaluate('HSW_DEMAND_READ|BDW_L3_MISS_LOCAL|HSW_SNOOP_DRAM', dI),
    ('NODE', 'OP_WRITE', 'RESULT_ACCESS'): evaluate('HSW_DEMAND_WRITE|BDW_L3_MISS_LOCAL|HSW_SNOOP_DRAM', dI),
}
groups = [
    ('core2', merged(I('core2'), {}), ['CORE2_MEROM', 'CORE2_MEROM_L', 'CORE2_PENRYN', 'CORE2_DUNNINGTON']),
    ('nehalem', merged(I('nehalem'), X('nehalem')), ['NEHALEM', 'NEHALEM_EP', 'NEHALEM_EX']),
    ('atom', merged(I('atom'), {}), ['ATOM_BONNELL', 'ATOM_BONNELL_MID', 'ATOM_SALTWELL', 'ATOM_SALTWELL_MID', 'ATOM_SALTWELL_TABLET']),
    ('slm', merged(I('slm'), X('slm')), ['ATOM_SILVERMONT', 'ATOM_SILVERMONT_D', 'ATOM_SILVERMONT_MID', 'ATOM_AIRMONT', 'ATOM_AIRMONT_MID']),
    ('glm', merged(I('glm'), X('glm')), ['ATOM_GOLDMONT', 'ATOM_GOLDMONT_D']),
    ('glp', merged(I('glp'), X('glp')), ['ATOM_GOLDMONT_PLUS']),
    ('tnt', merged(I('glp'), X('tnt'), itlb_inval), ['ATOM_TREMONT_D', 'ATOM_TREMONT', 'ATOM_TREMONT_L', 'ALDERLAKE_N']),
    ('westmere', merged(I('westmere'), X('nehalem')), ['WESTMERE', 'WESTMERE_EP', 'WESTMERE_EX']),
    ('snb', merged(I('snb'), X('snb')), ['SANDYBRIDGE', 'SANDYBRIDGE_X']),
    ('ivb', merged(I('snb'), X('snb'), {('DTLB', 'OP_READ', 'RESULT_MISS'): 0x8108}), ['IVYBRIDGE', 'IVYBRIDGE_X']),
    ('hsw', merged(I('hsw'), X('hsw')), ['HASWELL', 'HASWELL_X', 'HASWELL_L', 'HASWELL_G']),
    ('bdw', merged(I('hsw'), X('hsw'), {}, bdw_extra), ['BROADWELL', 'BROADWELL_D', 'BROADWELL_G', 'BROADWELL_X']),
    ('knl', merged(I('slm'), X('knl')), ['XEON_PHI_KNL', 'XEON_PHI_KNM']),
    ('skl', merged(I('skl'), X('skl')), ['SKYLAKE_X', 'SKYLAKE_L', 'SKYLAKE', 'KABYLAKE_L', 'KABYLAKE', 'COMETLAKE_L', 'COMETLAKE']),
    ('icl', merged(I('skl'), X('skl'), itlb_inval), ['ICELAKE_X', 'ICELAKE_D', 'ICELAKE_L', 'ICELAKE', 'TIGERLAKE_L', 'TIGERLAKE', 'ROCKETLAKE']),
    ('spr', merged(I('spr'), X('spr')), ['SAPPHIRERAPIDS_X', 'EMERALDRAPIDS_X', 'ALDERLAKE', 'ALDERLAKE_L', 'RAPTORLAKE', 'RAPTORLAKE_P', 'RAPTORLAKE_S']),
]
print('/* Generated by scripts/cache-maps.py from Linux 6.1 (arch/x86/events, arch/arm64/kernel/perf_event.c). */\n')
for n, m, _ in groups:
    emit('intel_%s_cache' % n, m)
emit('amd_f17h_cache', merged(idmap(amd, 'amd_hw_cache_event_ids_f17h', dA), {}))
emit('amd_k8_cache', merged(idmap(amd, 'amd_hw_cache_event_ids', dA), {}))
dR.update(defines(open(src + '/arch/arm64/include/asm/perf_event.h').read()))
for n in ['armv8_pmuv3', 'armv8_a53', 'armv8_a57', 'armv8_a73', 'armv8_thunder', 'armv8_vulcan']:
    m = re.search(r'\b%s_perf_cache_map\b[^=]*=\s*\{(.*?)\n\};' % n, arm, re.S).group(1)
    ent = {}
    for t, o, r, v in re.findall(r'\[C\((\w+)\)\]\[C\((\w+)\)\]\[C\((\w+)\)\]\s*=\s*(\w+)', m):
        ent[(t, o, r)] = (evaluate(v, dR), 0)
    emit('%s_cache' % n, ent)
print('static const struct intel_cache_models intel_cache_models[] = {')
for n, _, names in groups:
    print('\t{ intel_%s_cache, "%s", { %s } },' % (n, n, ', '.join('0x%X' % x for x in models(names))))
print('\t{ NULL, NULL, { 0 } }\n};')
