/* kube_placeholder.c: keeps the kubeclient library non-empty until the client lands. */
int kube_placeholder(void);
int kube_placeholder(void)
{
    return 0;
}
