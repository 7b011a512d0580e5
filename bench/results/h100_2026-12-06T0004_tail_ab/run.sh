#!/bin/bash
# 1) gpu_test of HEAD; 2) odd counts, build before the tail change (old) and after (new), alternating; 3) op-cost probes at 1..32 channels
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 ARSIM_DATADIR=$PWD
o=$OUT/s1; mkdir -p $o; t0=$(date +%s)
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/machine.txt 2>&1; cat $o/machine.txt
( export LD_LIBRARY_PATH=$PWD/.gpurun/new; timeout 150 .gpurun/new/gpu_test > $o/gpu_test.txt 2>&1; echo "gpu_test exit $? $(( $(date +%s)-t0 )) s"; tail -3 $o/gpu_test.txt )
for rep in 1 2; do for b in old new; do for R in 4 8; do for D in bf16 fp32; do
  [ $D = fp32 ] && C=1000,1001,1004,65536,65537,1000000,1000003 || C=1000,1001,1008,65536,65537,1000000,1000003
  ck=""; [ $rep = 1 ] && [ $b = new ] && ck=--check
  LD_LIBRARY_PATH=$PWD/.gpurun/$b timeout 100 .gpurun/$b/arsim bench -q --backend cuda --topology full:1 --ranks $R --dtype $D --no-nccl $ck --algo naive,1stage,2stage,ring,center_root --count $C --csv $o/odd_${b}_r${rep}_p${R}_$D.csv > $o/odd_${b}_r${rep}_p${R}_$D.txt 2>&1
  echo "odd $b rep$rep p$R $D exit $? $(( $(date +%s)-t0 )) s"
done; done; done; done
export LD_LIBRARY_PATH=$PWD/.gpurun/new
for R in 2 4 8; do for ch in 1 8 32; do
  timeout 60 .gpurun/new/arsim bench -q --topology full:1 --ranks $R --no-nccl --channels $ch --algo x-chain2,x-chain34,x-rchain2,x-rchain34,x-reduce,x-pushsig,x-pushwork,x-pushall --size 16,256,1K,8K --csv $o/probe_p${R}_c$ch.csv > $o/probe_p${R}_c$ch.txt 2>&1
  echo "probe p$R c$ch exit $? $(( $(date +%s)-t0 )) s"
done; done
cd $OUT && tar czf s1.tgz s1 && rm -rf s1
