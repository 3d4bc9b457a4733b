#!/usr/bin/env bash
# A/B on one GPU: v10's last block reading the partials with __ldcg (the
# lesson) against a weak coherent load (ld.global, which the acquire's L1
# invalidation makes safe). Not a record: logs for research/one-pass.md.
set -o pipefail
[ -d .git ] && mv .git /tmp/dotgit
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee $OUT/gpu.txt
CU=$(command -v cuobjdump)
cmake --preset gpu-only -Bbuild-a >$OUT/cfg-a.log 2>&1 && cmake --build build-a -j16 --target day24_reduction >$OUT/build-a.log 2>&1 || { tail $OUT/build-a.log; exit 1; }
f=lessons/day24_reduction/reduction.cu
grep -c 'return __ldcg(p); }' $f
sed -i 's|\[\](const float\* p) { return __ldcg(p); }|[](const float* p) { float v; asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v; }|' $f
grep -n 'ld.global.f32' $f
cmake --preset gpu-only -Bbuild-b >$OUT/cfg-b.log 2>&1 && cmake --build build-b -j16 --target day24_reduction >$OUT/build-b.log 2>&1 || { tail $OUT/build-b.log; exit 1; }
for b in a b; do
  $CU --dump-resource-usage build-$b/bin/day24_reduction | grep -A1 reduceV10 | grep -o 'REG:[0-9]*' | sed "s/^/$b /"
  $CU -sass build-$b/bin/day24_reduction | awk '/arch = /{a=$3} /Function : /{f=($0 ~ /reduceV10/)} f&&a=="sm_90"' | grep -o 'LDG[.A-Z0-9]*\|CCTL[.A-Z]*' | sort | uniq -c | sed "s/^/$b /"
done > $OUT/sass.txt; cat $OUT/sass.txt
compute-sanitizer --tool memcheck build-b/bin/day24_reduction --only v10 --size 65536 --check-only > $OUT/memcheck-b.log 2>&1; echo "memcheck b rc=$?"; tail -2 $OUT/memcheck-b.log
for n in 8192 65536 1048576 4194304; do for k in 1 2 3; do
  for b in a b; do build-$b/bin/day24_reduction --only v10 --size $n --samples 31 > $OUT/$b-v10-$n-$k.log 2>&1 || echo "FAIL $b $n $k"; done
  build-a/bin/day24_reduction --only v9 --size $n --samples 31 > $OUT/a-v9-$n-$k.log 2>&1 || echo "FAIL v9 $n $k"
done; done
grep -h "sweep.*graph\|sweep.*cold" $OUT/*-v10-*.log | head -3
cd $OUT && tar czf weak-logs.tgz *.log sass.txt gpu.txt && rm -f *.log
