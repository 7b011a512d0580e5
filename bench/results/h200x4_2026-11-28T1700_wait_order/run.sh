#!/bin/sh
# A/B: peers' flags waited for in rank order (A, shipped) or in arrival order (B), side by side
export NCCL_NVLS_ENABLE=0
top=$(pwd); dc=$top/.devcarry
export LD_LIBRARY_PATH="$dc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ARSIM_DATADIR=$top
o=$OUT/ab; mkdir -p $o
n=$(nvidia-smi -L | wc -l)
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > $o/machine.txt 2>&1
head -2 $o/machine.txt
timeout 120 $dc/b/arsim run --backend cuda --topology full:$n --ranks $((2*n)) --algo 1stage,2stage --count 1001,65537,1000003 --dtype fp32,bf16 --check > $o/b_check.txt 2>&1; echo "B check rc=$?"
timeout 120 $dc/b/arsim run --backend cuda --topology full:$n --algo 1stage,2stage,direct --size 4K:4M --check > $o/b_check2.txt 2>&1; echo "B check2 rc=$?"
for rep in 1 2; do for x in a b; do
  bin=$dc/arsim; [ $x = b ] && bin=$dc/b/arsim
  for ch in 16 64; do
    timeout 150 $bin bench --backend cuda --no-nccl --algo 1stage,2stage --channels $ch --size 8K:64M --csv $o/${x}_${rep}_c$ch.csv > $o/${x}_${rep}_c$ch.txt 2>&1 || echo "bench $x $rep $ch failed"
  done
done; done
cd $OUT && tar czf ab.tgz ab && rm -rf ab
echo done
