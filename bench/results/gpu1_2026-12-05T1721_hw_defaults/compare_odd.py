# each odd count against its aligned neighbour, per build (files odd_BUILD_pR_DTYPE.csv)
import csv,glob,re
import sys
D=sys.argv[1].rstrip('/')+'/'
for b in ['cur','new']:
    allr=[];over=[]
    for f in sorted(glob.glob(D+f'odd_{b}_*.csv')):
        by={}
        for r in csv.DictReader(open(f)):
            a=re.sub(r'auto:.*','auto',r['algo']); by.setdefault(a,[]).append((int(r['count']),float(r['time_us']),r['algo'],r['channels']))
        for a,v in by.items():
            v.sort()
            for i in range(0,len(v),2):
                rat=v[i][1]/v[i+1][1]; allr.append(rat)
                if rat>1.10: over.append(f"{f.split('_',2)[2][:-4]} {a}@{v[i][0]}: {v[i][1]:.2f}/{v[i+1][1]:.2f}={rat:.3f} ch {v[i][3]}/{v[i+1][3]}")
    if not allr: continue
    print(b,'pairs',len(allr),'max %.3f'%max(allr),'over 1.10:',len(over))
    for x in over: print('   ',x)
