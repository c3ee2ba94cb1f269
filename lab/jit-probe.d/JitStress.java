import java.util.concurrent.atomic.*;
/**
 * lab/jit-probe's stress workload: as much JIT code installed, patched and freed per second as a
 * small program can make, to measure how often JVMs crash under an emulator (issue 29).
 * Usage: java JitStress SECONDS THREADS [ROUNDS_PER_LOADER]. Each thread loads a fresh copy of
 * these classes in a new class loader every few rounds (new code to compile at every tier, the
 * old copy's code unloaded and its memory reused), runs polymorphic calls through a shifting set
 * of Op classes (inline caches, class-hierarchy and type-profile deoptimisations), while a daemon
 * thread calls System.gc() every 150 ms (nmethod entry barriers re-armed and patched). Every
 * result is checked against the first one computed for its key: exit 3 on a mismatch.
 */
public class JitStress {
  static abstract class Op { abstract long f(long x); long g(long x) { return f(x) + 1; } }
  static final class Op0 extends Op { long f(long x) { return (x * 20) + (x >>> 19) + 0; } }
  static final class Op1 extends Op { long f(long x) { return (x * 35) ^ (x >>> 4) ^ 1; } }
  static final class Op2 extends Op { long f(long x) { return (x * 60) - (x >>> 16) - 2; } }
  static final class Op3 extends Op { long f(long x) { return (x * 51) + (x >>> 26) + 3; } }
  static final class Op4 extends Op { long f(long x) { return (x * 15) + (x >>> 16) + 4; } }
  static final class Op5 extends Op { long f(long x) { return (x * 52) - (x >>> 14) - 5; } }
  static final class Op6 extends Op { long f(long x) { return (x * 3) ^ (x >>> 23) ^ 6; } }
  static final class Op7 extends Op { long f(long x) { return (x * 37) + (x >>> 24) + 7; } }
  static final class Op8 extends Op { long f(long x) { return (x * 78) + (x >>> 31) + 8; } }
  static final class Op9 extends Op { long f(long x) { return (x * 43) + (x >>> 1) + 9; } }
  static final class Op10 extends Op { long f(long x) { return (x * 6) - (x >>> 21) - 10; } }
  static final class Op11 extends Op { long f(long x) { return (x * 4) ^ (x >>> 31) ^ 11; } }
  static final class Op12 extends Op { long f(long x) { return (x * 90) ^ (x >>> 7) ^ 12; } }
  static final class Op13 extends Op { long f(long x) { return (x * 95) - (x >>> 1) - 13; } }
  static final class Op14 extends Op { long f(long x) { return (x * 31) ^ (x >>> 25) ^ 14; } }
  static final class Op15 extends Op { long f(long x) { return (x * 66) + (x >>> 18) + 15; } }
  static final class Op16 extends Op { long f(long x) { return (x * 47) - (x >>> 8) - 16; } }
  static final class Op17 extends Op { long f(long x) { return (x * 31) ^ (x >>> 25) ^ 17; } }
  static final class Op18 extends Op { long f(long x) { return (x * 40) + (x >>> 30) + 18; } }
  static final class Op19 extends Op { long f(long x) { return (x * 56) - (x >>> 27) - 19; } }
  static final class Op20 extends Op { long f(long x) { return (x * 85) + (x >>> 4) + 20; } }
  static final class Op21 extends Op { long f(long x) { return (x * 83) ^ (x >>> 24) ^ 21; } }
  static final class Op22 extends Op { long f(long x) { return (x * 18) ^ (x >>> 24) ^ 22; } }
  static final class Op23 extends Op { long f(long x) { return (x * 95) - (x >>> 23) - 23; } }
  static final class Op24 extends Op { long f(long x) { return (x * 57) - (x >>> 17) - 24; } }
  static final class Op25 extends Op { long f(long x) { return (x * 27) ^ (x >>> 10) ^ 25; } }
  static final class Op26 extends Op { long f(long x) { return (x * 78) ^ (x >>> 29) ^ 26; } }
  static final class Op27 extends Op { long f(long x) { return (x * 67) - (x >>> 13) - 27; } }
  static final class Op28 extends Op { long f(long x) { return (x * 7) + (x >>> 16) + 28; } }
  static final class Op29 extends Op { long f(long x) { return (x * 54) - (x >>> 14) - 29; } }
  static final class Op30 extends Op { long f(long x) { return (x * 25) - (x >>> 12) - 30; } }
  static final class Op31 extends Op { long f(long x) { return (x * 92) - (x >>> 25) - 31; } }
  static final class Op32 extends Op { long f(long x) { return (x * 97) + (x >>> 12) + 32; } }
  static final class Op33 extends Op { long f(long x) { return (x * 59) - (x >>> 22) - 33; } }
  static final class Op34 extends Op { long f(long x) { return (x * 16) + (x >>> 25) + 34; } }
  static final class Op35 extends Op { long f(long x) { return (x * 69) ^ (x >>> 27) ^ 35; } }
  static final class Op36 extends Op { long f(long x) { return (x * 50) - (x >>> 16) - 36; } }
  static final class Op37 extends Op { long f(long x) { return (x * 6) + (x >>> 16) + 37; } }
  static final class Op38 extends Op { long f(long x) { return (x * 42) - (x >>> 23) - 38; } }
  static final class Op39 extends Op { long f(long x) { return (x * 78) ^ (x >>> 19) ^ 39; } }
  static final class Op40 extends Op { long f(long x) { return (x * 85) + (x >>> 6) + 40; } }
  static final class Op41 extends Op { long f(long x) { return (x * 67) + (x >>> 8) + 41; } }
  static final class Op42 extends Op { long f(long x) { return (x * 28) - (x >>> 18) - 42; } }
  static final class Op43 extends Op { long f(long x) { return (x * 32) - (x >>> 13) - 43; } }
  static final class Op44 extends Op { long f(long x) { return (x * 47) - (x >>> 31) - 44; } }
  static final class Op45 extends Op { long f(long x) { return (x * 48) ^ (x >>> 15) ^ 45; } }
  static final class Op46 extends Op { long f(long x) { return (x * 87) - (x >>> 18) - 46; } }
  static final class Op47 extends Op { long f(long x) { return (x * 96) ^ (x >>> 1) ^ 47; } }
  static Op make(int i) { switch (i) {
    case 0: return new Op0();
    case 1: return new Op1();
    case 2: return new Op2();
    case 3: return new Op3();
    case 4: return new Op4();
    case 5: return new Op5();
    case 6: return new Op6();
    case 7: return new Op7();
    case 8: return new Op8();
    case 9: return new Op9();
    case 10: return new Op10();
    case 11: return new Op11();
    case 12: return new Op12();
    case 13: return new Op13();
    case 14: return new Op14();
    case 15: return new Op15();
    case 16: return new Op16();
    case 17: return new Op17();
    case 18: return new Op18();
    case 19: return new Op19();
    case 20: return new Op20();
    case 21: return new Op21();
    case 22: return new Op22();
    case 23: return new Op23();
    case 24: return new Op24();
    case 25: return new Op25();
    case 26: return new Op26();
    case 27: return new Op27();
    case 28: return new Op28();
    case 29: return new Op29();
    case 30: return new Op30();
    case 31: return new Op31();
    case 32: return new Op32();
    case 33: return new Op33();
    case 34: return new Op34();
    case 35: return new Op35();
    case 36: return new Op36();
    case 37: return new Op37();
    case 38: return new Op38();
    case 39: return new Op39();
    case 40: return new Op40();
    case 41: return new Op41();
    case 42: return new Op42();
    case 43: return new Op43();
    case 44: return new Op44();
    case 45: return new Op45();
    case 46: return new Op46();
    case 47: return new Op47();
    default: throw new AssertionError(); } }
  static long run(Op[] ops, int n, long seed) {
    long acc = seed;
    for (int i = 0; i < n; i++) { Op o = ops[(int) ((acc >>> 11) & 0x7fffffff) % ops.length]; acc = o.g(acc) + i; }
    return acc;
  }
  static long chain(long x, int depth) { return depth == 0 ? x * 31 + 7 : chain(x ^ depth, depth - 1) + 1; }
  /** One round in whatever class loader loaded this copy of JitStress: returns {key, result}. */
  public static long[] round(int round, int id) {
    int k = 1 + (round / 3) % 48, off = (round * 7 + id) % 48;
    Op[] ops = new Op[Math.min(k, 6)];
    for (int i = 0; i < ops.length; i++) ops[i] = make((off + i * k) % 48);
    long key = ((long) off << 32) | ((long) k << 16) | ops.length;
    long r = run(ops, 30_000, key) + chain(key, 50);
    return new long[] {key, r};
  }
  public static void main(String[] a) throws Exception {
    long seconds = Long.parseLong(a[0]);
    int threads = Integer.parseInt(a[1]);
    int roundsPerLoader = a.length > 2 ? Integer.parseInt(a[2]) : 4;
    java.net.URL[] cp = { JitStress.class.getProtectionDomain().getCodeSource().getLocation() };
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    AtomicLong checks = new AtomicLong(), bad = new AtomicLong(), loaders = new AtomicLong();
    Thread gc = new Thread(() -> { while (System.nanoTime() < end) { System.gc(); try { Thread.sleep(150); } catch (InterruptedException e) { return; } } });
    gc.setDaemon(true); gc.start();
    Thread[] ts = new Thread[threads];
    java.util.concurrent.ConcurrentHashMap<Long, Long> seen = new java.util.concurrent.ConcurrentHashMap<>();
    for (int t = 0; t < threads; t++) {
      final int id = t;
      ts[t] = new Thread(() -> {
        try {
          int round = 0;
          while (System.nanoTime() < end) {
            // a fresh copy of the classes: new code to compile, the old copy's code unloaded at a GC
            java.lang.reflect.Method m;
            if (roundsPerLoader > 0) {
              ClassLoader l = new java.net.URLClassLoader(cp, null);
              m = Class.forName("JitStress", true, l).getMethod("round", int.class, int.class);
              loaders.incrementAndGet();
            } else {
              m = JitStress.class.getMethod("round", int.class, int.class);
            }
            for (int j = 0; j < Math.max(1, roundsPerLoader) && System.nanoTime() < end; j++) {
              round++;
              long[] kr = (long[]) m.invoke(null, round, id);
              byte[] junk = new byte[1 << 14]; junk[round & 1023] = (byte) kr[1];
              Long prev = seen.putIfAbsent(kr[0], kr[1]);
              checks.incrementAndGet();
              if (prev != null && prev != kr[1]) { bad.incrementAndGet(); System.out.println("MISMATCH key=" + kr[0] + " " + prev + " != " + kr[1]); }
            }
          }
        } catch (Exception e) { e.printStackTrace(); bad.incrementAndGet(); }
      });
      ts[t].start();
    }
    for (Thread t : ts) t.join();
    System.out.println("checks=" + checks.get() + " loaders=" + loaders.get() + " mismatches=" + bad.get());
    System.exit(bad.get() == 0 ? 0 : 3);
  }
}
