#include <cstdio>
typedef unsigned U;typedef unsigned long long L;
__global__ void k(int op,U*g,float*gf,L*g6,U*o){__shared__ U s[1024];__shared__ float f[32];__shared__ L d[32];
int t=threadIdx.x;for(int i=t;i<1024;i+=32)s[i]=0;f[t]=0;d[t]=0;__syncthreads();U r=0;
switch(op){
case 0:atomicAdd(&s[t],1u);break;
case 1:r=atomicAdd(&s[t],1u);break;
case 2:atomicAdd(&s[0],1u);break;
case 3:atomicAdd(&s[2*t],1u);break;
case 4:r=atomicCAS(&s[t],0u,1u);break;
case 5:r=atomicExch(&s[t],1u);break;
case 6:r=atomicMin(&s[t],1u);break;
case 7:r=atomicInc(&s[t],5u);break;
case 8:atomicAdd(&f[t],1.f);break;
case 9:r=(U)atomicAdd(&d[t],1ull);break;
case 10:atomicAdd(&g[t],1u);break;
case 11:r=atomicAdd(&g[t],1u);break;
case 12:atomicAdd(&g[0],1u);break;
case 13:r=atomicCAS(&g[t],0u,1u);break;
case 14:atomicAdd(&gf[t],1.f);break;
case 15:r=(U)atomicAdd(&g6[t],1ull);break;
case 16:{U x;asm volatile("atom.relaxed.gpu.global.add.u32 %0,[%1],%2;":"=r"(x):"l"(g+t),"r"(1u));}break;
case 17:{U x;U w=(U)__cvta_generic_to_shared(&s[t]);asm volatile("atom.relaxed.cta.shared.add.u32 %0,[%1],%2;":"=r"(x):"r"(w),"r"(1u));}break;
case 18:atomicAdd(&s[t*32],1u);break;
case 19:r=atomicAdd(&s[0],1u);break;
}
__syncthreads();o[t]=r+s[t]+(U)f[t]+(U)d[t];}
int main(){U*g;float*gf;L*g6;U*o;cudaMalloc(&g,4096);cudaMalloc(&gf,4096);cudaMalloc(&g6,4096);cudaMalloc(&o,4096);
cudaMemset(g,0,4096);for(int op=0;op<20;op++)k<<<1,32>>>(op,g,gf,g6,o);cudaDeviceSynchronize();printf("%s\n",cudaGetErrorString(cudaGetLastError()));}
