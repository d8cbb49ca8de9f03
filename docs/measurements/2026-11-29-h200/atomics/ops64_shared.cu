#include <cstdio>
typedef unsigned long long L;
__global__ void k(int op,L*o){__shared__ L d[32];__shared__ long long e[32];__shared__ double f[32];
int t=threadIdx.x;d[t]=5;e[t]=5;f[t]=0;__syncthreads();L r=0;
switch(op){
case 0:r=atomicMin(&d[t],(L)t);break;
case 1:r=atomicMax(&d[t],(L)t);break;
case 2:r=atomicAnd(&d[t],(L)t);break;
case 3:r=atomicOr(&d[t],(L)t);break;
case 4:r=atomicXor(&d[t],(L)t);break;
case 5:r=atomicExch(&d[t],(L)t);break;
case 6:r=(L)atomicMin(&e[t],(long long)t);break;
case 7:r=(L)atomicAdd(&f[t],1.0);break;
case 8:r=atomicCAS(&d[t],5ull,(L)t);break;
}
__syncthreads();o[t]=r+d[t]+(L)e[t]+(L)f[t];}
int main(){L*o;cudaMalloc(&o,4096);for(int op=0;op<9;op++)k<<<1,32>>>(op,o);cudaDeviceSynchronize();printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
