import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.utils.internals.Exit;

/**
 * Kafka's command-line tools run one after another in this one JVM, so that a test pays for
 * starting Kafka's classes once instead of once per command (tests/realkafka/jvm.py).
 *
 * It connects to the port given as its argument on 127.0.0.1 and reads requests there, each
 * frame a kind byte and a length-prefixed payload: 'M' main class, 'A' one argument, 'I' the
 * stdin bytes, 'G' run. While the tool runs, 'O' and 'E' frames carry its stdout and stderr as
 * they are written (so a hung call still shows what it printed), then 'X' its exit code.
 *
 * A fresh JVM is imitated where the tools can tell: Exit.exit/halt (the tools' only way out:
 * none of the tools the tests run calls System.exit) end the call with their status instead
 * of the JVM; the shutdown hooks a tool registers through Exit.addShutdownHook run when its
 * call ends, as they would at JVM exit; when main returns, the call waits for the non-daemon
 * threads it started, as the JVM would before exiting; an exception out of main prints as
 * the JVM's launcher prints it, with status 1. System.out and System.err are set once, before
 * any tool or Log4j captures them, to streams that forward to the running call.
 */
public final class ToolServer {
    private static final long THREAD_WAIT_MS = 30_000;

    /** Thrown by the exit and halt procedures to unwind the tool's main. */
    private static final class ExitCalled extends RuntimeException {
        ExitCalled() {
            super(null, null, false, false);
        }
    }

    /** One call's stdout or stderr: bytes written go out as KIND frames, in order. */
    private static final class Forward extends OutputStream {
        private final byte kind;

        Forward(byte kind) {
            this.kind = kind;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (len > 0)
                send(kind, b, off, len);
        }
    }

    /** A shutdown hook's thread: it may print after Exit.exit, as at JVM exit. */
    private static final class HookThread extends Thread {
        HookThread(Runnable hook) {
            super(() -> {
                try {
                    hook.run();
                } catch (ExitCalled ignored) { }
            }, "shutdown-hook");
        }
    }

    private static DataOutputStream out;
    private static volatile boolean running;
    private static volatile Integer exitStatus;
    private static final List<Runnable> HOOKS = new ArrayList<>();

    static synchronized void send(byte kind, byte[] b, int off, int len) throws IOException {
        // Output between calls (a thread a tool left behind) has no call to go to, and after
        // Exit.exit only the shutdown hooks still run in a fresh JVM: the tool's catch and
        // finally blocks that unwind behind ExitCalled print nothing.
        boolean hook = Thread.currentThread() instanceof HookThread;
        if (kind != 'X' && (!running || (exitStatus != null && !hook)))
            return;
        out.writeByte(kind);
        out.writeInt(len);
        out.write(b, off, len);
        out.flush();
    }

    public static void main(String[] args) throws Exception {
        InputStream lifeline = new FileInputStream(FileDescriptor.in);
        // The test process holds our stdin: when it goes (even killed), so do we.
        Thread watch = new Thread(() -> {
            try {
                while (lifeline.read() >= 0) { }
            } catch (IOException ignored) { }
            Runtime.getRuntime().halt(0);
        }, "lifeline");
        watch.setDaemon(true);
        watch.start();

        // The charset a fresh JVM's System.out uses when it is a pipe.
        Charset charset = Charset.defaultCharset();
        System.setOut(new PrintStream(new Forward((byte) 'O'), true, charset));
        System.setErr(new PrintStream(new Forward((byte) 'E'), true, charset));
        Exit.setExitProcedure((status, message) -> exit(status));
        Exit.setHaltProcedure((status, message) -> exit(status));
        Exit.setShutdownHookAdder((name, hook) -> {
            synchronized (HOOKS) {
                HOOKS.add(hook);
            }
        });

        Socket socket = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0]));
        socket.setTcpNoDelay(true);
        out = new DataOutputStream(socket.getOutputStream());
        DataInputStream in = new DataInputStream(socket.getInputStream());
        String mainClass = null;
        List<String> toolArgs = new ArrayList<>();
        byte[] stdin = new byte[0];
        while (true) {
            int kind;
            try {
                kind = in.readByte();
            } catch (IOException closed) {
                Runtime.getRuntime().halt(0);
                return;
            }
            byte[] payload = new byte[in.readInt()];
            in.readFully(payload);
            switch (kind) {
                case 'M' -> mainClass = new String(payload, "UTF-8");
                case 'A' -> toolArgs.add(new String(payload, "UTF-8"));
                case 'I' -> stdin = payload;
                case 'G' -> {
                    int status = call(mainClass, toolArgs.toArray(new String[0]), stdin);
                    byte[] code = Integer.toString(status).getBytes("UTF-8");
                    send((byte) 'X', code, 0, code.length);
                    toolArgs.clear();
                    stdin = new byte[0];
                }
                default -> throw new IOException("unknown frame " + kind);
            }
        }
    }

    private static void exit(int status) {
        synchronized (ToolServer.class) {
            if (exitStatus == null)
                exitStatus = status;
        }
        throw new ExitCalled();
    }

    private static int call(String mainClass, String[] args, byte[] stdin) {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        exitStatus = null;
        synchronized (HOOKS) {
            HOOKS.clear();
        }
        System.setIn(new ByteArrayInputStream(stdin));
        running = true;
        int status = 0;
        try {
            Method main = Class.forName(mainClass).getMethod("main", String[].class);
            try {
                main.invoke(null, (Object) args);
                awaitNewThreads(before);
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof ExitCalled)) {
                    System.err.print("Exception in thread \"main\" ");
                    e.getCause().printStackTrace();
                    status = 1;
                }
            }
            Integer exited = exitStatus;
            if (exited != null)
                status = exited;
            runHooks();
        } catch (ReflectiveOperationException e) {
            System.err.println("Error: Could not find or load main class " + mainClass);
            status = 1;
        } finally {
            System.out.flush();
            System.err.flush();
            running = false;
        }
        return status;
    }

    /** What the JVM does before it exits after main returns: wait for non-daemon threads. */
    private static void awaitNewThreads(Set<Thread> before) {
        long deadline = System.currentTimeMillis() + THREAD_WAIT_MS;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (before.contains(thread) || thread.isDaemon() || thread == Thread.currentThread())
                continue;
            try {
                thread.join(Math.max(1, deadline - System.currentTimeMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The hooks the tool registered, run concurrently as the JVM's shutdown runs them. */
    private static void runHooks() {
        List<Thread> threads = new ArrayList<>();
        synchronized (HOOKS) {
            for (Runnable hook : HOOKS)
                threads.add(new HookThread(hook));
            HOOKS.clear();
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            try {
                thread.join(THREAD_WAIT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
