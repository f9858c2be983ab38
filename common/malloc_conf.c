/*
 * malloc_conf.c - jemalloc's settings, for the programs that link it
 * (meson.build: prog_malloc_dep; never the libraries). jemalloc reads this
 * variable once, before the first allocation; MALLOC_CONF in the
 * environment still overrides it.
 *
 * thp:always - jemalloc asks the kernel (transparent huge pages in
 * "madvise" mode, Debian's default) for 2 MB pages on its extents. A run
 * touches its heap once as it grows: a 1,000-pod Deployment run took
 * 64,000 page faults on 4 KB pages, each a trip through the hypervisor on
 * a virtual machine, and takes about 11,000 this way.
 */
extern const char *malloc_conf;
const char *malloc_conf = "thp:always,metadata_thp:auto";
