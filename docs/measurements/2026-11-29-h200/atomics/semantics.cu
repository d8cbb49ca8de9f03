#include <cstdio>
#include <cfloat>
__global__ void k(float*g,unsigned*u,float*o){__shared__ float s[4];__shared__ unsigned v[3];
float m=FLT_MIN;s[0]=1.5f*m;s[1]=0.f;v[0]=12;v[1]=12;v[2]=0;
atomicAdd(&s[0],-m);atomicAdd(&s[1],1e-40f);
atomicAdd(&g[0],-m);atomicAdd(&g[1],1e-40f);
float x;asm volatile("atom.relaxed.gpu.global.add.f32 %0,[%1],%2;":"=f"(x):"l"(g+2),"f"(-m));
unsigned w=(unsigned)__cvta_generic_to_shared(&s[2]);s[2]=1.5f*m;asm volatile("atom.relaxed.cta.shared.add.f32 %0,[%1],%2;":"=f"(x):"r"(w),"f"(-m));
atomicInc(&v[0],9u);atomicDec(&v[1],9u);atomicDec(&v[2],9u);atomicInc(&u[0],9u);atomicDec(&u[1],9u);
o[0]=s[0];o[1]=s[1];o[2]=s[2];o[3]=v[0];o[4]=v[1];o[5]=v[2];}
int main(){float h[3]={1.5f*FLT_MIN,0.f,1.5f*FLT_MIN};unsigned hu[2]={12,0};float*g,*o;unsigned*u;cudaMalloc(&g,12);cudaMalloc(&u,8);cudaMalloc(&o,24);
cudaMemcpy(g,h,12,cudaMemcpyHostToDevice);cudaMemcpy(u,hu,8,cudaMemcpyHostToDevice);k<<<1,1>>>(g,u,o);float r[6],gr[3];unsigned ur[2];
cudaMemcpy(r,o,24,cudaMemcpyDeviceToHost);cudaMemcpy(gr,g,12,cudaMemcpyDeviceToHost);cudaMemcpy(ur,u,8,cudaMemcpyDeviceToHost);
printf("shared ftz-result %a ftz-operand %a inlineptx %a | global ftz-result %a ftz-operand %a inlineptx %a | shared inc12 %g dec12 %g dec0 %g | global inc12 %u dec0 %u\n",r[0],r[1],r[2],gr[0],gr[1],gr[2],r[3],r[4],r[5],ur[0],ur[1]);}
