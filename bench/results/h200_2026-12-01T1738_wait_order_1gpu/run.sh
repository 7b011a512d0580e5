#!/bin/bash
# one H200: correctness of the offset-named peer flags, A/B wait order, fresh 1-GPU validation rows
set -u
export NCCL_NVLS_ENABLE=0
top=$(pwd); dc=$top/.devcarry
export LD_LIBRARY_PATH=$dc:${LD_LIBRARY_PATH:-}
export ARSIM_DATADIR=$top
new=$dc/arsim; old=$dc/old_arsim
o=$OUT/r; mkdir -p $o
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > $o/machine.txt 2>&1
cat $o/machine.txt
t0=$(date +%s)
timeout 240 $dc/hw/gpu_test --quick > $o/gpu_test.log 2>&1; echo "gpu_test rc=$? $(($(date +%s)-t0)) s"; grep -E '^[0-9]+%|FAIL' $o/gpu_test.log | head -5
for r in 3 4 8; do
  timeout 60 $new run --backend cuda --topology full:1 --ranks $r --algo 1stage,2stage --count 1001,65537,1000003,4194304 --dtype fp32 --check -q > $o/check_$r.txt 2>&1; echo "check ranks=$r rc=$?"
  timeout 30 $new run --backend cuda --topology full:1 --ranks $r --op reducescatter --algo direct --count 4096,1048576 --check -q >> $o/check_$r.txt 2>&1; echo "check rs ranks=$r rc=$?"
  timeout 30 $new run --backend cuda --topology full:1 --ranks $r --op allgather --algo direct --count 4096,1048576 --check -q >> $o/check_$r.txt 2>&1; echo "check ag ranks=$r rc=$?"
done
echo "checks done $(($(date +%s)-t0)) s"
S=8K,32K,128K,512K,2M,8M,32M
for i in 1 2; do for b in new old; do for r in 4 8; do
  bin=$new; [ $b = old ] && bin=$old
  timeout 60 $bin bench --topology full:1 --ranks $r --algo 1stage,2stage --size $S --no-nccl --csv $o/ab_${b}_r${r}_$i.csv -q > /dev/null 2>>$o/ab.err; echo "ab $b r=$r i=$i rc=$? $(($(date +%s)-t0)) s"
done; done; done
cd $OUT && tar czf r.tgz r && rm -rf r
