# each named algorithm at its defaults (def_BUILD_rN_pR.csv, median of rounds) against the fastest of sweep/
import csv,glob,collections,re,statistics
import sys
D=sys.argv[1].rstrip('/')+'/'
def rows(f):
    return list(csv.DictReader(open(f)))
# defaults: median of 2 rounds per build
deft=collections.defaultdict(list); defch={}
for f in glob.glob(D+'def_*.csv'):
    b=f.split('def_')[1].split('_')[0]
    for r in rows(f):
        a=re.sub(r'auto:.*','auto',r['algo']); k=(b,int(r['nranks']),a,int(r['size_bytes']))
        deft[k].append(float(r['time_us'])); defch[k]=r['channels'] if a!='auto' else r['algo']
meas=collections.defaultdict(dict)
for f in glob.glob(D+'sweep/*.csv'):
    for r in rows(f):
        k=(int(r['nranks']),r['algo'].split('/')[0],int(r['size_bytes'])); meas[k][int(r['channels'])]=float(r['time_us'])
print("named at defaults against best channel count (sweep), per build; and new/cur time")
worst={'cur':0,'new':0}; ratios=[]
for k in sorted(set((x[1],x[2],x[3]) for x in deft)):
    R,a,s=k
    c=statistics.median(deft[('cur',)+k]); n=statistics.median(deft[('new',)+k])
    ratios.append(n/c)
    line=f"{R} {a:12s} {s:>10d} cur {defch[('cur',)+k]:>14s} {c:9.2f}  new {defch[('new',)+k]:>14s} {n:9.2f}  new/cur {n/c:.3f}"
    if a!='auto' and k in meas:
        best=min(min(meas[k].values()), c, n)
        line+=f"  cur/best {c/best:.3f} new/best {n/best:.3f}"
        worst['cur']=max(worst['cur'],c/best); worst['new']=max(worst['new'],n/best)
    if defch[('cur',)+k]!=defch[('new',)+k] or abs(n/c-1)>0.05: print(line)
print('worst named/best', worst, 'geomean new/cur %.4f'%statistics.geometric_mean(ratios))
